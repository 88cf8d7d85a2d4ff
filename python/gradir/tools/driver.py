"""What gradir-opt and gradir-run share: command-line options of the opt
driver, reading input, splitting it, parsing + verifying + running a pipeline
on one buffer (``process_chunk``), rendering diagnostics, writing output and
guarding a tool's main against tracebacks."""

from __future__ import annotations

import errno
import os
import stat
import sys
import tempfile
from dataclasses import dataclass, field

__all__ = ["Options", "UsageError", "Diag", "ChunkResult", "parse_args", "flags_to_pipeline",
           "flatten_diagnostics", "render", "process_chunk", "split_buffer", "umask",
           "write_output", "report_write_error", "read_input", "guarded"]


@dataclass
class Options:
    input: str = "-"
    output: str | None = None
    pipeline: str | None = None
    pass_flags: list[tuple[str, str | None, str]] = field(default_factory=list)
    split_input_file: bool = False
    split_marker: str = "// -----"
    verify_diagnostics: bool = False
    print_after_all: bool = False
    print_before_all: bool = False
    print_generic: bool = False
    print_debuginfo: bool = False
    print_segments: bool = False
    print_after: list[str] = field(default_factory=list)
    print_before: list[str] = field(default_factory=list)
    print_after_change: bool = False
    print_after_failure: bool = False
    elide_elements: int | None = None
    timing: bool = False
    dump_pipeline: bool = False
    verify_each: bool = True
    emit_bytecode: bool = False
    allow_unregistered: bool = False
    verify_on_parse: bool = True
    list_passes: bool = False
    show_version: bool = False
    crash_recovery: bool = True
    crash_reproducer: str | None = None


class UsageError(Exception):
    pass


_BOOL_FLAGS = {
    "split-input-file": "split_input_file",
    "verify-diagnostics": "verify_diagnostics",
    "mlir-print-ir-after-all": "print_after_all",
    "mlir-print-ir-before-all": "print_before_all",
    "mlir-print-op-generic": "print_generic",
    "mlir-print-debuginfo": "print_debuginfo",
    "print-segment-sizes": "print_segments",
    "mlir-print-ir-after-change": "print_after_change",
    "mlir-print-ir-after-failure": "print_after_failure",
    "mlir-timing": "timing",
    "dump-pass-pipeline": "dump_pipeline",
    "verify-each": "verify_each",
    "emit-bytecode": "emit_bytecode",
    "mlir-disable-threading": None,      # gradir always runs single-threaded
    "crash-recovery": "crash_recovery",
    "mlir-pass-pipeline-local-reproducer": None,     # gradir's reproducers are always local
    "allow-unregistered-dialect": "allow_unregistered",
    "list-passes": "list_passes",
    "help": "list_passes",
    "version": "show_version",
}


def parse_args(argv: list[str]) -> Options:
    opts = Options()
    inputs: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "-" or not arg.startswith("-"):
            inputs.append(arg)
            continue
        if arg in ("-o", "--o"):
            if i >= len(argv):
                raise UsageError("option '-o' requires a value")
            opts.output = argv[i]
            i += 1
            continue
        if arg.startswith("-o") and not arg.startswith("--"):
            opts.output = arg[2:].lstrip("=")
            continue
        if arg == "-h":
            opts.list_passes = True
            continue
        name, eq, value = arg.lstrip("-").partition("=")
        if name == "pass-pipeline":
            if not eq:
                if i >= len(argv):
                    raise UsageError("option '--pass-pipeline' requires a value")
                value = argv[i]
                i += 1
            opts.pipeline = value
        elif name == "split-input-file":
            opts.split_input_file = True
            if eq and value:
                opts.split_marker = value
        elif name in ("mlir-print-ir-after", "mlir-print-ir-before"):
            if not eq or not value:
                raise UsageError(f"option '--{name}' requires a pass name "
                                 f"(--{name}=<pass>[,<pass>...])")
            names = [v.strip() for v in value.split(",")]
            if not all(names):
                raise UsageError(f"option '--{name}': empty pass name in '{value}'")
            getattr(opts, "print_after" if name.endswith("after") else "print_before").extend(
                names)
        elif name == "mlir-pass-pipeline-crash-reproducer":
            if not eq or not value:
                raise UsageError(f"option '--{name}' requires a file name (--{name}=<file>)")
            opts.crash_reproducer = value
        elif name == "mlir-elide-elementsattrs-if-larger":
            try:
                opts.elide_elements = int(value)
                if opts.elide_elements < 0:
                    raise ValueError(value)
                # no attribute has 2^63 elements: a larger limit elides nothing
                # (MLIR's printer takes an int64)
                opts.elide_elements = min(opts.elide_elements, (1 << 63) - 1)
            except ValueError:
                raise UsageError(f"option '--{name}' expects a non-negative integer, "
                                 f"got '{value}'") from None
        elif name in _BOOL_FLAGS:
            flag = _parse_bool(name, value) if eq else True
            if _BOOL_FLAGS[name] is not None:
                setattr(opts, _BOOL_FLAGS[name], flag)
        elif name == "mlir-very-unsafe-disable-verifier-on-parsing" or name == "no-rlx-verify":
            opts.verify_on_parse = False
        else:
            opts.pass_flags.append((name, value if eq else None, arg))
    if len(inputs) > 1:
        raise UsageError(f"too many positional arguments: {' '.join(inputs)}")
    if opts.output == "":
        raise UsageError("option '-o' requires a file name")
    if inputs:
        opts.input = inputs[0]
    if opts.pipeline is not None and opts.pass_flags:
        raise UsageError("'--pass-pipeline' cannot be used with individual pass options "
                         f"({opts.pass_flags[0][2]})")
    return opts


def _parse_bool(name: str, value: str) -> bool:
    low = value.lower()
    if low in ("true", "1", ""):
        return True
    if low in ("false", "0"):
        return False
    raise UsageError(f"option '--{name}' expects true or false, got '{value}'")


def is_upstream_pass(name: str, context) -> bool:
    """Whether upstream MLIR's registry knows pass ``name`` (on modules or on
    functions)."""
    from mlir.passmanager import PassManager

    for text in (name, f"func.func({name})"):
        try:
            PassManager("builtin.module", context=context).add(text)
            return True
        except Exception:
            continue
    return False


def check_pass_names(names: list[str], context) -> None:
    """Names given to --mlir-print-ir-before/after must be passes."""
    from ..registry import PASSES

    for name in names:
        if name not in PASSES and not is_upstream_pass(name, context):
            raise UsageError(f"'{name}' (in --mlir-print-ir-before/after) does not refer to "
                             "a registered pass (see gradir-opt --list-passes)")


def flags_to_pipeline(opts: Options, context) -> str | None:
    """Turns ``--rlx-dce --canonicalize`` into a pipeline; unknown flags are
    usage errors."""
    from ..registry import PASSES

    if not opts.pass_flags:
        return opts.pipeline
    elems = []
    for name, value, raw in opts.pass_flags:
        if name not in PASSES and not is_upstream_pass(name, context):
            raise UsageError(f"unknown command line argument '{raw}' (see gradir-opt --help)")
        elems.append(name + ("{" + value + "}" if value else ""))
    return "builtin.module(" + ",".join(elems) + ")"


# ----------------------------------------------------------------------------
# Diagnostics

@dataclass
class Diag:
    severity: str        # error | warning | note | remark
    location: str        # file:line:col (or another location's text)
    message: str

    def line(self) -> int | None:
        parts = self.location.rsplit(":", 2)
        if len(parts) == 3 and parts[1].isdigit():
            return int(parts[1])
        return None

    def file(self) -> str:
        return self.location.rsplit(":", 2)[0]


def flatten_diagnostics(records) -> list[Diag]:
    out = []
    for sev, loc, msg, notes in records:
        out.append(Diag(sev, loc, msg))
        out.extend(flatten_diagnostics(notes))
    return out


def render(diag: Diag, source_name: str, lines: list[str]) -> str:
    text = f"{diag.location}: {diag.severity}: {diag.message}"
    ln = diag.line()
    if ln is not None and diag.file() == source_name and 1 <= ln <= len(lines):
        col = int(diag.location.rsplit(":", 1)[1])
        src = lines[ln - 1].rstrip("\n")
        text += "\n" + src + "\n" + " " * max(0, col - 1) + "^"
    return text


# ----------------------------------------------------------------------------
# Processing one buffer (one split of the input)

@dataclass
class ChunkResult:
    output: str | None
    diags: list[Diag]
    failed: bool


def process_chunk(text: str, source_name: str, opts: Options, context,
                  pipeline: str | None, on_module=None) -> ChunkResult:
    """Parses, verifies and runs ``pipeline`` on one buffer.  ``on_module``
    (gradir-run) is called on the resulting module, with the diagnostic
    handlers still installed; its exceptions propagate."""
    from mlir import ir

    from .. import _compat
    from ..ir import parse, print_module
    from ..passes.pipeline import IrPrinting, PipelineError, build_pass_manager

    def print_ir(op):
        return print_module(op, generic=opts.print_generic, debug_info=opts.print_debuginfo,
                            elide_elements=opts.elide_elements)

    diags: list[Diag] = []

    def handler(d):
        diags.extend(flatten_diagnostics(_compat.diagnostic_records([d])))
        return True

    def keep(d: Diag) -> bool:
        # mlir-opt does not attach "see current operation" notes when verifying
        # diagnostics (printOpOnDiagnostic is off); neither do we.
        return not (opts.verify_diagnostics and d.severity == "note"
                    and d.message.startswith("see current operation:"))

    def sink(severity, location, message):
        diags.append(Diag(severity, location, message))

    handle = context.attach_diagnostic_handler(handler)
    _compat.push_diagnostic_sink(sink)
    try:
        try:
            module = parse(text, source_name=source_name, context=context)
        except ir.MLIRError as err:
            diags.extend(flatten_diagnostics(_compat.diagnostic_records(err.error_diagnostics)))
            if not any(d.severity == "error" for d in diags):
                diags.append(Diag("error", f"{source_name}:1:1", str(err)))
            return ChunkResult(None, diags, True)
        except _compat.ParseError as err:
            diags.extend(flatten_diagnostics(err.records))
            return ChunkResult(None, diags, True)
        if opts.verify_on_parse:
            from ..dialects.verify import verify_module
            errors = verify_module(module)
            if errors:
                for loc, msg in errors:
                    diags.append(Diag("error", _compat.format_location(loc), msg))
                return ChunkResult(None, diags, True)
        if pipeline:
            printing = None
            if opts.print_after or opts.print_before:
                printing = IrPrinting(frozenset(opts.print_before), frozenset(opts.print_after))
                printing.print_ir = print_ir
            try:
                pm = build_pass_manager(pipeline, context, printing)
            except PipelineError as err:
                diags.append(Diag("error", f"<pass-pipeline>:1:{err.column}", err.message))
                return ChunkResult(None, diags, True)
            if opts.dump_pipeline:
                print(f"Pass Manager:\n{pm}", file=sys.stderr)
            pm.enable_verifier(opts.verify_each)
            if opts.timing:
                pm.enable_timing()
            if opts.print_after_all or opts.print_before_all or opts.print_after_failure:
                context.enable_multithreading(False)
                pm.enable_ir_printing(print_before_all=opts.print_before_all,
                                      # MLIR: after-failure alone is after-all
                                      # printed only on failure
                                      print_after_all=(opts.print_after_all
                                                       or opts.print_after_failure),
                                      print_module_scope=True,
                                      print_after_change=opts.print_after_change,
                                      print_after_failure=opts.print_after_failure,
                                      large_elements_limit=opts.elide_elements,
                                      print_generic_op_form=opts.print_generic,
                                      enable_debug_info=opts.print_debuginfo)
            reproducer = None
            if opts.crash_recovery:     # a crashing (upstream) pass: a diagnostic, not SIGSEGV
                reproducer = opts.crash_reproducer or _reproducer_path()
                if not _compat.enable_crash_recovery(pm, reproducer):
                    reproducer = None
            try:
                pm.run(module.operation)
            except ir.MLIRError as err:
                diags.extend(flatten_diagnostics(_compat.diagnostic_records(err.error_diagnostics)))
                if reproducer is not None:
                    _without_reproducer_noise(diags, reproducer)
                if not any(d.severity == "error" for d in diags):
                    diags.append(Diag("error", _compat.format_location(module.operation.location),
                                      "pass pipeline failed: " + str(err).splitlines()[0]))
                return ChunkResult(None, diags, True)
        if on_module is not None:
            return ChunkResult(None, diags, bool(on_module(module, diags.append)))
        if opts.emit_bytecode:
            import io
            buf = io.BytesIO()
            module.operation.write_bytecode(buf)
            return ChunkResult(buf.getvalue(), diags, any(d.severity == "error" for d in diags))
        out = print_module(module, generic=opts.print_generic, debug_info=opts.print_debuginfo,
                           segments=opts.print_segments, elide_elements=opts.elide_elements)
        return ChunkResult(out, diags, any(d.severity == "error" for d in diags))
    finally:
        # An error can reach both the diagnostic handler and the MLIRError.
        unique, seen = [], set()
        for d in diags:
            key = (d.severity, d.location, d.message)
            if keep(d) and key not in seen:
                seen.add(key)
                unique.append(d)
        diags[:] = unique
        _compat.pop_diagnostic_sink()
        handle.detach()


def split_buffer(text: str, marker: str) -> list[tuple[str, int]]:
    """Splits on lines equal to ``marker``; each chunk is padded with blank
    lines so its line numbers are those of the whole file."""
    chunks, current, start = [], [], 0
    for i, line in enumerate(text.split("\n")):
        if line.strip() == marker:
            chunks.append(("\n" * start + "\n".join(current), start))
            current, start = [], i + 1
        else:
            current.append(line)
    chunks.append(("\n" * start + "\n".join(current), start))
    return chunks


# ----------------------------------------------------------------------------

def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _write_all(fd: int, data: bytes) -> None:
    """Writes every byte of ``data`` to ``fd``; a write that makes no
    progress is an error (ENOSPC), never a silent truncation."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        if n <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[n:]


def write_output(path: str | None, data: str | bytes) -> None:
    """Writes ``data`` to ``path`` (None or ``-``: standard output) the way
    users expect of their tools:

    - a regular file (or a new one) is written to a temporary file in the
      same directory and renamed over it, so a failed write leaves the old
      file intact; the file keeps its mode (a new one gets 0666 & ~umask);
    - a symbolic link is followed: its target is replaced, the link stays;
    - a file with several hard links is rewritten in place, so it stays one
      file under all its names;
    - anything that is not a regular file (``/dev/null``, ``/dev/stdout``, a
      FIFO, a terminal) is opened and written directly, never replaced;
    - a short write is an error (``OSError``), never a truncated output.
    """
    if isinstance(data, str):
        data = data.encode()
    if path is None or path == "-":
        sys.stdout.flush()
        _write_all(sys.stdout.fileno(), data)
        return
    try:
        st = os.stat(path)                 # follows symbolic links
    except FileNotFoundError:
        st = None
    if st is not None and (not stat.S_ISREG(st.st_mode) or st.st_nlink > 1):
        flags = os.O_WRONLY | (os.O_TRUNC if stat.S_ISREG(st.st_mode) else 0)
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
        return
    target = os.path.realpath(path)       # replace a link's target, not the link
    directory = os.path.dirname(target)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".", dir=directory)
    try:
        try:
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        if st is not None:
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
            if hasattr(os, "chown") and (st.st_uid, st.st_gid) != (os.getuid(), os.getgid()):
                try:
                    os.chown(tmp, st.st_uid, st.st_gid)
                except OSError:
                    pass                  # not ours to give away: keep our ownership
        else:
            os.chmod(tmp, 0o666 & ~umask())     # mkstemp makes 0600; use the usual mode
        os.replace(tmp, target)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise


def report_write_error(tool: str, path: str | None, err: OSError) -> None:
    """Prints why output could not be written (``path`` None: stdout)."""
    what = "standard output" if path in (None, "-") else f"output file '{path}'"
    print(f"{tool}: error: could not write {what}: {err.strerror or err}", file=sys.stderr)


from .bytecode import MAGIC as _BYTECODE_MAGIC  # noqa: E402


def _bytecode_as_text(tool: str, name: str, raw: bytes) -> str | None:
    """MLIR bytecode (``--emit-bytecode``, ``mlir-opt --emit-bytecode``) read
    as ``mlir-opt`` reads it, handed on as text with its locations (printed
    with debug info), so diagnostics still point into the source the
    bytecode was made from.  Read in a child process (``tools/bytecode.py``:
    MLIR's reader aborts on damaged files).  None after printing why it
    cannot be read."""
    from .bytecode import bytecode_as_text
    text, reason = bytecode_as_text(raw)
    if text is None:
        print(f"{name}: error: could not read MLIR bytecode: {reason}", file=sys.stderr)
    return text


# The most a stream (a pipe, a FIFO, a device) may hold: ``yes |`` or
# ``/dev/zero`` would otherwise be read until memory runs out.
MAX_STREAM_BYTES = 1 << 31


class _NotText(ValueError):
    """A stream that cannot be MLIR text or bytecode (said as it is read)."""


def _read_stream(f) -> bytes:
    """All of stream ``f``, refusing as soon as it cannot be MLIR input:
    a NUL byte or invalid UTF-8 in text (``/dev/zero``, ``/dev/urandom``
    would never end), more than ``MAX_STREAM_BYTES``.  Bytecode is read
    whole (it holds any byte)."""
    import codecs
    parts, size, checked = [], 0, 0
    decoder = codecs.getincrementaldecoder("utf-8")()
    text = None                 # known once the first bytes are in
    while True:
        part = f.read(1 << 20)
        if part:
            parts.append(part)
            size += len(part)
        if text is None and (size >= len(_BYTECODE_MAGIC) or not part):
            text = not b"".join(parts).startswith(_BYTECODE_MAGIC)
        while text and checked < len(parts):
            chunk = parts[checked]
            at = size - sum(len(p) for p in parts[checked:])
            nul = chunk.find(b"\0")
            if nul >= 0:
                raise _NotText(f"not text (a NUL byte at byte {at + nul})")
            try:
                decoder.decode(chunk, final=False)
            except UnicodeDecodeError as err:
                raise _NotText(f"not UTF-8 text (byte {at + err.start})") from None
            checked += 1
        if size > MAX_STREAM_BYTES:
            raise _NotText(f"more than {MAX_STREAM_BYTES >> 30} GiB of input, which is not "
                           "supported")
        if not part:
            return b"".join(parts)


def read_input(tool: str, path: str) -> tuple[str, str] | None:
    """``(source name, text)`` of the input file (``-``: stdin), or None
    after printing why it cannot be read (missing, unreadable, a closed
    stdin, not UTF-8, malformed MLIR bytecode).  Bytecode comes back as
    text (``_bytecode_as_text``)."""
    name = "<stdin>" if path == "-" else path
    what = "standard input" if path == "-" else f"input file '{path}'"
    try:
        if path == "-":
            stream = sys.stdin.buffer if sys.stdin is not None else None
            if stream is None:
                raise OSError(errno.EBADF, "standard input is closed")
            raw = _read_stream(stream)
        else:
            with open(path, "rb") as f:
                raw = f.read() if stat.S_ISREG(os.fstat(f.fileno()).st_mode) \
                    else _read_stream(f)
        if raw.startswith(_BYTECODE_MAGIC):
            text = _bytecode_as_text(tool, name, raw)
            if text is None:
                return None
        else:
            text = raw.decode("utf-8")
        from ..ir import input_problem
        problem = input_problem(text)
        if problem is not None:
            print(f"{name}:{problem[0]}:{problem[1]}: error: {problem[2]}", file=sys.stderr)
            return None
        return name, text
    except (OSError, ValueError) as err:
        if isinstance(err, _NotText):
            reason = str(err)
        elif isinstance(err, UnicodeDecodeError):
            reason = f"not UTF-8 text (byte {err.start})"
        elif isinstance(err, OSError):
            reason = err.strerror or str(err)
        else:                              # ValueError: I/O on a closed file
            reason = "closed"
        print(f"{tool}: error: could not open {what}: {reason}", file=sys.stderr)
        return None


def guarded(tool: str, input_path: str, body) -> int:
    """Runs a tool's ``body`` so that no Python traceback reaches the user:
    usage errors, interrupts, closed pipes and internal errors become
    messages and exit codes."""
    try:
        return body()
    except UsageError as err:
        print(f"{tool}: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (``| head -1``): the output is incomplete, so
        # exit 1, and keep Python's exit-time flush from writing again.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 1
    except RecursionError:
        src = input_path if input_path != "-" else "<stdin>"
        print(f"{src}:1:1: error: input nested too deeply", file=sys.stderr)
        return 1
    except MemoryError:
        src = input_path if input_path != "-" else "<stdin>"
        print(f"{src}:1:1: error: out of memory", file=sys.stderr)
        return 1
    except Exception as exc:  # never let a Python traceback reach the user
        if os.environ.get("GRADIR_DEBUG"):
            import traceback
            traceback.print_exc()
        src = input_path if input_path != "-" else "<stdin>"
        print(f"{src}:1:1: error: internal error: {type(exc).__name__}: {exc} "
              f"(set GRADIR_DEBUG=1 for a traceback)", file=sys.stderr)
        return 1


_CRASH_MARK = "A signal was caught while processing the MLIR module"
_REPRODUCER_NOISE = ("Failures have been detected while processing an MLIR pass pipeline",
                     "Pipeline failed while executing")


def _without_reproducer_noise(diags: list, reproducer: str) -> None:
    """MLIR's crash reproducer reports every failed pipeline, crashed or
    not, with an error ("Failures have been detected ...") and a note naming
    the reproducer it wrote.  For a pass that failed the ordinary way (a
    refusal with its own diagnostic) those are noise, and the reproducer
    goes: only a crash keeps them (``--verify-diagnostics`` sees exactly
    the pass's own diagnostics, as without recovery)."""
    if any(d.message.startswith(_CRASH_MARK) for d in diags):
        return
    diags[:] = [d for d in diags if not d.message.startswith(_REPRODUCER_NOISE)]
    try:
        os.unlink(reproducer)
    except OSError:
        pass


def _reproducer_path() -> str:
    """Where a crashing pass's input IR goes (MLIR's local crash reproducer,
    ``_compat.enable_crash_recovery``): written only when a pass crashes; the
    diagnostic names it."""
    return os.path.join(tempfile.gettempdir(), f"gradir-crash-reproducer-{os.getpid()}.mlir")
