"""Runs gradir's lit suite and closes with a plain 'N passed, N failed' line."""
import os
import re
import subprocess
import sys

obj_test_dir, src_test_dir = sys.argv[1], sys.argv[2]
proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "lit"), "-sv", obj_test_dir], text=True,
                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
sys.stdout.write(proc.stdout)
counts = {k: 0 for k in ("Passed", "Failed", "Unsupported", "Expectedly Failed",
                          "Unresolved", "Timed Out", "Unexpectedly Passed")}
for key in counts:
    m = re.search(r"^\s*%s\s*:\s*(\d+)" % re.escape(key), proc.stdout, re.M)
    if m:
        counts[key] = int(m.group(1))
failed = counts["Failed"] + counts["Unresolved"] + counts["Timed Out"] + counts["Unexpectedly Passed"]
passed = counts["Passed"] + counts["Expectedly Failed"]
print(f"check: {passed} passed, {failed} failed, {counts['Unsupported']} skipped")
if proc.returncode != 0 or passed == 0:
    sys.exit(1)
