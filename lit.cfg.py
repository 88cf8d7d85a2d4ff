# lit configuration for gradir (see STYLE.md).
import os
import lit.formats

config.name = "gradir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "lit.site.cfg.py.in", "run_tests.py",
                   "Inputs", "conftest.py"]
config.test_source_root = os.path.join(config.gradir_src_root, "test")
config.test_exec_root = os.path.join(config.gradir_obj_root, "test")

bindir = os.path.join(config.gradir_venv, "bin")
config.environment["PATH"] = os.pathsep.join(
    [bindir, config.mlir_bin_dir, config.llvm_bin_dir, config.environment.get("PATH", os.environ.get("PATH", ""))])
config.environment["FILECHECK_OPTS"] = "-enable-var-scope --allow-unused-prefixes=false"
config.environment["PYTHONDONTWRITEBYTECODE"] = "1"
# The compile cache (python/gradir/runtime/cache.py) is off in the suite, so a
# test compiles what it means to test; the cache tests turn it on in their own
# directories.  Schedules and caches never go to the user's ~/.cache.
config.environment["GRADIR_CACHE"] = "0"
config.environment["GRADIR_CACHE_DIR"] = os.path.join(config.gradir_obj_root, "test", "gradir-cache")
# GRADIR_NUM_THREADS / OMP_NUM_THREADS pick the thread count of compiled code
# (default: the cores of the CPU affinity): `GRADIR_NUM_THREADS=3 lit ...`
# runs the numeric suites at 3 threads.
for var in ("HOME", "TMPDIR", "GRADIR_NUM_THREADS", "OMP_NUM_THREADS"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

python = os.path.join(bindir, "python")
config.substitutions.append(("%PYTHON", python))
config.substitutions.append(("%gradir_src", config.gradir_src_root))
config.substitutions.append(("%rlx_irdl", os.path.join(config.gradir_src_root, "dialect", "rlx.irdl.mlir")))
config.substitutions.append(("%grad_irdl", os.path.join(config.gradir_src_root, "dialect", "grad.irdl.mlir")))
config.substitutions.append(
    ("%mlir-opt-gradir",
     "mlir-opt --irdl-file=%s" % os.path.join(config.gradir_obj_root, "gradir.irdl.mlir")))
