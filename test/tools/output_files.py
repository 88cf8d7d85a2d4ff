# RUN: %PYTHON %s | FileCheck %s
# How gradir-opt and gradir-run write (-o) and read: symbolic links are
# followed (the target is rewritten, the link stays), a hard-linked file stays
# one file, a file keeps its mode, FIFOs and devices are written directly and
# never replaced, a full device or a reader that goes away is an error (exit
# 1), and a closed or non-UTF-8 stdin is a message, not a traceback.

import os
import shutil
import stat
import subprocess
import sys
import tempfile

BIN = os.path.dirname(sys.executable)
SRC = """func.func @main(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<f32> {
  %0 = "rlx.add"(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "rlx.sum"(%0) : (tensor<3xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}
"""


def tool(name, *args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, **kw):
    return subprocess.run([os.path.join(BIN, name), *args], stdin=stdin, stdout=stdout,
                          stderr=subprocess.PIPE, **kw)


def run(f):
    print(f"TEST: {f.__name__}")
    tmp = tempfile.mkdtemp(prefix="gradir-out-")
    try:
        f(tmp)
    finally:
        shutil.rmtree(tmp)
    return f


def source(tmp):
    path = os.path.join(tmp, "in.mlir")
    with open(path, "w") as f:
        f.write(SRC)
    return path


@run
def symlink_and_mode(tmp):
    src = source(tmp)
    target, link = os.path.join(tmp, "target.mlir"), os.path.join(tmp, "link.mlir")
    with open(target, "w") as f:
        f.write("old\n")
    os.chmod(target, 0o640)
    os.symlink("target.mlir", link)
    for name, args in (("gradir-opt", []), ("gradir-run", ["--random-inputs", "0"])):
        r = tool(name, src, *args, "-o", link)
        assert r.returncode == 0, r.stderr
        assert os.path.islink(link), "the link was replaced"
        assert stat.S_IMODE(os.stat(target).st_mode) == 0o640, oct(os.stat(target).st_mode)
        with open(target, "rb") as f:
            head = f.read(6)
        print(name, "link kept, target rewritten:", head != b"old\n")
    assert sorted(os.listdir(tmp)) == ["in.mlir", "link.mlir", "target.mlir"], os.listdir(tmp)
# CHECK-LABEL: TEST: symlink_and_mode
# CHECK: gradir-opt link kept, target rewritten: True
# CHECK: gradir-run link kept, target rewritten: True


@run
def hard_link(tmp):
    src = source(tmp)
    a, b = os.path.join(tmp, "a.mlir"), os.path.join(tmp, "b.mlir")
    with open(a, "w") as f:
        f.write("old\n")
    os.chmod(a, 0o604)
    os.link(a, b)
    r = tool("gradir-opt", src, "-o", b)
    assert r.returncode == 0, r.stderr
    st_a, st_b = os.stat(a), os.stat(b)
    assert st_a.st_ino == st_b.st_ino and st_a.st_nlink == 2, "the hard link was broken"
    assert stat.S_IMODE(st_b.st_mode) == 0o604
    with open(a) as f:
        print("hard link shares the new text:", f.read().startswith("module {"))
# CHECK-LABEL: TEST: hard_link
# CHECK: hard link shares the new text: True


@run
def fifo_and_devices(tmp):
    src = source(tmp)
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", fifo], stdout=subprocess.PIPE)
    r = tool("gradir-opt", src, "-o", fifo)
    out = reader.communicate(timeout=60)[0]
    assert r.returncode == 0, r.stderr
    print("fifo still a fifo:", stat.S_ISFIFO(os.stat(fifo).st_mode),
          "reader got the module:", out.startswith(b"module {"))
    # A character device (the first of these that still is one on this
    # shared machine: an old gradir-opt -o /dev/null replaced it with a file).
    dev = next(d for d in ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty")
               if os.path.exists(d) and stat.S_ISCHR(os.stat(d).st_mode))
    before = os.lstat(dev)
    r = tool("gradir-opt", src, "-o", dev)
    after = os.lstat(dev)
    print("device exit", r.returncode, "same device node:",
          stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino)
    r = tool("gradir-opt", src, "-o", "/dev/stdout")
    print("/dev/stdout exit", r.returncode, "still a link:", os.path.islink("/dev/stdout"))
    print("/dev/stdout carried the output:", r.stdout.startswith(b"module {"))
    if os.path.exists("/dev/full"):
        for name, args in (("gradir-opt", []), ("gradir-run", ["--random-inputs", "0"])):
            r = tool(name, src, *args, "-o", "/dev/full")
            print(name, "-o /dev/full: exit", r.returncode, r.stderr.decode().strip())
            with open("/dev/full", "w") as full:
                r = tool(name, src, *args, stdout=full)
            print(name, "> /dev/full: exit", r.returncode, r.stderr.decode().strip())
# CHECK-LABEL: TEST: fifo_and_devices
# CHECK: fifo still a fifo: True reader got the module: True
# CHECK: device exit 0 same device node: True
# CHECK: /dev/stdout exit 0 still a link: True
# CHECK: /dev/stdout carried the output: True
# CHECK: gradir-opt -o /dev/full: exit 1 gradir-opt: error: could not write output file '/dev/full': No space left on device
# CHECK: gradir-opt > /dev/full: exit 1 gradir-opt: error: could not write standard output: No space left on device
# CHECK: gradir-run -o /dev/full: exit 1 gradir-run: error: could not write output file '/dev/full': No space left on device
# CHECK: gradir-run > /dev/full: exit 1 gradir-run: error: could not write standard output: No space left on device


@run
def reader_goes_away(tmp):
    # 5000 ops print to far more than a pipe buffer: `| head -1` cuts it.
    lines = ["func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {",
             '  %v0 = "rlx.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>']
    lines += [f'  %v{i} = "rlx.exp"(%v{i - 1}) : (tensor<3xf32>) -> tensor<3xf32>'
              for i in range(1, 5000)]
    lines += ["  return %v4999 : tensor<3xf32>", "}"]
    path = os.path.join(tmp, "big.mlir")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    proc = subprocess.Popen([os.path.join(BIN, "gradir-opt"), path], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    code = proc.wait()
    print("head -1:", first.strip().decode(), "exit", code, "stderr empty:", not err, err[-200:])
# CHECK-LABEL: TEST: reader_goes_away
# CHECK: head -1: module { exit 1 stderr empty: True


@run
def bad_stdin(tmp):
    for name in ("gradir-opt", "gradir-run"):
        r = tool(name, input=b"\xff\xfe module", stdin=None)
        print(name, "non-UTF-8 stdin: exit", r.returncode, r.stderr.decode().strip())
        r = subprocess.run([os.path.join(BIN, name)], capture_output=True, close_fds=True,
                           preexec_fn=lambda: os.close(0))
        print(name, "closed stdin: exit", r.returncode, r.stderr.decode().strip())
# CHECK-LABEL: TEST: bad_stdin
# CHECK: gradir-opt non-UTF-8 stdin: exit 1 gradir-opt: error: could not open standard input: not UTF-8 text (byte 0)
# CHECK: gradir-opt closed stdin: exit 1 gradir-opt: error: could not open standard input: standard input is closed
# CHECK: gradir-run non-UTF-8 stdin: exit 1 gradir-run: error: could not open standard input: not UTF-8 text (byte 0)
# CHECK: gradir-run closed stdin: exit 1 gradir-run: error: could not open standard input: standard input is closed
