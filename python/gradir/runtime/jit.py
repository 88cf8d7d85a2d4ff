"""gradir.compile: rlx module -> machine code callable on numpy arrays."""

from __future__ import annotations

import os
from pathlib import Path

from mlir import ir

from .. import _compat
from ..ir import as_operation, make_context, print_module
from .abi import Function, FunctionTable
from .signature import (CompileError, interface_matches, public_functions, select_functions,
                        signature_of)
from .export import export_library
from .heap import keep_freed_memory
from .kernels import runtime_libraries as kernel_runtime_libraries
from .kernels import uses_kernels
from .toolchain import (TARGETS, CompileOptions, install_check_hooks, llvm_opt_level,
                        needs_runner_utils, packed_caller, runtime_library_dir, uses_openmp)

__all__ = ["CachedExecutable", "CompileOptions", "Executable", "PartitionedExecutable",
           "PartitionedToolchainExecutable", "compile", "runtime_library_dir"]


class Executable(FunctionTable):
    """Compiled functions of one module: ``exe["main_adjoint"](x, w)``.

    Arguments and results are numpy arrays (tuples for tuple types); the
    functions check the count, shapes and dtypes of what they are given.
    """

    # issue 14 (compile cache): True when the functions run code loaded from
    # the persistent cache, False when compiled here, None with the cache off.
    cache_hit = None
    cache_path = None
    # Why this machine cannot run the code (compiled for a CPU with features
    # it lacks: SIGILL), or None; the functions then raise TargetMismatchError.
    _cannot_run = None

    def __getitem__(self, name: str):
        if self._cannot_run is not None:
            from .errors import TargetMismatchError
            raise TargetMismatchError(self._cannot_run)
        return super().__getitem__(name)

    def __init__(self, lowered: ir.Module, signatures: dict, options: CompileOptions,
                 pic: bool = False, lowered_text: str | None = None,
                 llvm_ir: str | None = None):
        """``lowered_text`` / ``llvm_ir``: the lowered module printed / its
        LLVM IR, where the caller has either (``llvm_ir`` then prints on first
        use: issue 14, compile time)."""
        self.options = options
        self.signatures = signatures
        self._pic = pic
        self._lowered_module = None
        if lowered_text is None and llvm_ir is not None:
            self._lowered_text, self._lowered_module = None, lowered
            parallel = uses_openmp(llvm_ir)
            self.uses_kernels = uses_kernels(llvm_ir)
        else:
            self._lowered_text = print_module(lowered) if lowered_text is None else lowered_text
            parallel = uses_openmp(self._lowered_text)
            self.uses_kernels = uses_kernels(self._lowered_text)
        threads = options.threads if parallel else 1
        libs = [str(p) for p in kernel_runtime_libraries(
            options.target, threads, options.cpu if self.uses_kernels else None,
            needs_runner_utils(lowered.operation), process=True)]
        if threads > 1:
            import ctypes
            from .openmp import configure
            # the process's OpenMP runtime (the kernel library, when used,
            # comes after it), before its first region
            from .toolchain import process_openmp_library
            configure(ctypes.CDLL(str(process_openmp_library())))   # (libs holds it)
        self._engine = _compat.execution_engine(lowered, llvm_opt_level(options.opt_level),
                                                libs, pic=pic)
        keep_freed_memory()
        install_check_hooks(self._engine, lowered)
        self._functions = {}
        for name, sig in signatures.items():
            fn_ptr = self._engine.raw_lookup("_mlir_ciface_" + name)
            if not fn_ptr:
                raise CompileError(f"compiled module lacks '_mlir_ciface_{name}'")
            self._functions[name] = Function(sig, packed_caller(fn_ptr), keepalive=self._engine)

    @property
    def llvm_ir(self) -> str:
        """The lowered module (LLVM dialect) as text."""
        return _printed_once(self, "_lowered_text")

    def export_library(self, path: str | os.PathLike) -> Path:
        """Writes a shared library with every public function and its
        signature, and copies the runtime libraries it needs next to it.
        ``gradir.runtime.load(path)`` runs it with numpy and ctypes only."""
        if self._pic:       # the JIT's own code is PIC: link it, do not compile again
            import tempfile
            with tempfile.TemporaryDirectory(prefix="gradir-export-") as tmp:
                obj = Path(tmp) / "module.o"
                self._engine.dump_to_object_file(str(obj))
                return export_library(self, Path(path), object_file=obj)
        return export_library(self, Path(path))


# --- issue 14: what a compile-cache hit returns (runtime/cache.py) ---


class CachedExecutable(Executable):
    """An ``Executable`` whose functions run a cached library (no MLIR
    lowering, no LLVM).  ``llvm_ir`` lowers the module again on first use;
    ``export_library`` copies the cached library."""

    cache_hit = True

    def __init__(self, library, module_text: str, options, functions=None):
        self.options = options
        self.signatures = library.signatures
        self._library = library
        self._functions = dict(library._functions)
        self._module_text = module_text
        self._requested = functions
        self._lowered = None
        self.cache_path = library.path

    def _where(self) -> str:
        return "compiled functions (from the compile cache)"

    @property
    def llvm_ir(self) -> str:
        return _lowered_again(self)

    def export_library(self, path) -> Path:
        import shutil
        import uuid
        path = Path(path).resolve()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.parent / f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp"
        try:
            shutil.copyfile(self._library.path, tmp)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        # issue 14 (threads): the OpenMP runtime a multi-threaded entry needs,
        # kept beside the cache entries, goes beside the export too.
        # So does gradir's matmul kernel library (libgradir_kernels_*.so):
        # each one the export names, or a library copied names (the
        # kernels' OpenMP drivers name the kernels and libomp).
        folder = self._library.path.parent
        named = [path.read_bytes()]
        left = [lib for lib in [folder / "libomp.so",
                                *sorted(folder.glob("libgradir_kernels_*.so"))] if lib.is_file()]
        while True:
            found = [lib for lib in left if any(lib.name.encode() in data for data in named)]
            if not found:
                break
            for lib in found:
                left.remove(lib)
                named.append(lib.read_bytes())
                dest = path.parent / lib.name
                if not dest.exists() or dest.stat().st_size != lib.stat().st_size:
                    shutil.copy2(lib, dest)
        return path


class ToolchainExecutable(CachedExecutable):
    """issue 14: an ``Executable`` whose code LLVM's ``opt``/``llc`` binaries
    compiled with every loop nest outlined (``llvm_tools.py``), linked into
    a library as ``export_library`` links one and loaded like a cache hit."""

    cache_hit = None

    @classmethod
    def build(cls, lowered: ir.Module, llvm_ir: str, sigs: dict, options: CompileOptions,
              workers: int | None = None):
        """``lowered``: the lowered module (LLVM dialect), kept to print
        ``llvm_ir`` on demand; ``llvm_ir``: its translation to LLVM IR."""
        import tempfile
        from types import SimpleNamespace
        from ..conversion.cpu.host import resolve
        from . import llvm_tools
        import shutil
        import weakref
        work = tempfile.mkdtemp(prefix="gradir-llvm-")
        try:
            path = llvm_tools.build_library(
                llvm_ir, SimpleNamespace(signatures=sigs, options=options, llvm_ir=llvm_ir),
                llvm_opt_level(options.opt_level), resolve(options.cpu), Path(work),
                workers=workers)
            from .toolchain import preload_openmp, uses_openmp
            if uses_openmp(llvm_ir):
                preload_openmp()
            exe = cls(_load_or_stub(path, sigs), "", options)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
        exe._lowered_module = lowered
        exe.cache_path = None
        # The library file (export_library copies it) lives as long as the executable.
        weakref.finalize(exe, shutil.rmtree, work, ignore_errors=True)
        return exe

    @property
    def llvm_ir(self) -> str:
        """The lowered module (LLVM dialect) as text (printed on first use:
        issue 14, compile time, ~30 ms of the LeNet step)."""
        return _printed_once(self, "_lowered")


class PartitionedExecutable(Executable):
    """issue 14 (compile time): an ``Executable`` whose large functions were
    cut in parts lowered and compiled at once (``partition.py``); a split
    function runs its parts in order (``partition.python_glue``), its
    library (``export_library``, the compile cache) links the parts' objects
    with a C glue of the unsplit ABI (``partition.glue_c``)."""

    cache_hit = None
    cache_path = None

    def __init__(self, parts, options, functions=None):
        from .partition import python_glue
        self.options = options
        self.signatures = parts.signatures
        self._module_text = parts.module_text
        self._requested = functions
        self._lowered = None
        self._engines = parts.engines
        self._plans = parts.plans
        self.uses_openmp = options.threads > 1
        self.uses_kernels = options.kernels
        self.glue_c = parts.glue_c
        self._functions = {}
        for name, sig in parts.signatures.items():
            if name in parts.plans:
                plan = parts.plans[name]
                call = python_glue(plan, len(sig.inputs),
                                   [packed_caller(parts.pointers[p]) for p in plan.parts])
            else:
                call = packed_caller(parts.pointers[name])
            self._functions[name] = Function(sig, call, keepalive=parts.engines)

    @property
    def llvm_ir(self) -> str:
        """The module lowered whole (what ``gradir-opt --rlx-lower-to-llvm``
        prints; the parts were lowered apart), made on first use."""
        return _lowered_again(self)

    def object_files(self, directory) -> list[Path]:
        """Each part's object (PIC, as the JIT compiled it) in ``directory``."""
        objs = []
        for i, engine in enumerate(self._engines):
            obj = Path(directory) / f"part{i}.o"
            engine.dump_to_object_file(str(obj))
            objs.append(obj)
        return objs

    def export_library(self, path) -> Path:
        import tempfile
        with tempfile.TemporaryDirectory(prefix="gradir-export-") as tmp:
            return export_library(self, Path(path), object_file=self.object_files(tmp))


class PartitionedToolchainExecutable(CachedExecutable):
    """issue 14 (compile time): a split program (``partition.py``) some of
    whose parts went through LLVM's tool binaries (``llvm_tools.part_object``:
    loop nests outlined), every part's object linked with the C glue into
    one library (the compile cache stores it as it is; ``export_library``
    copies it).  A split function runs its parts in order through the
    Python glue, as ``PartitionedExecutable``'s do; ``llvm_ir`` is the
    module lowered whole, made on first use."""

    cache_hit = None

    def __init__(self, parts, options, functions=None):
        import shutil
        import weakref
        from .partition import python_glue
        try:
            if options.threads > 1:
                from .toolchain import preload_openmp
                preload_openmp()
            library = _load_or_stub(parts.library, parts.signatures)
        except BaseException:
            shutil.rmtree(parts.directory, ignore_errors=True)
            raise
        super().__init__(library, parts.module_text, options, functions)
        self.cache_path = None
        self._plans = parts.plans
        self.glue_c = parts.glue_c
        for name, plan in parts.plans.items():
            if not library._functions:
                break
            sig = self.signatures[name]
            callers = [_library_caller(library, part, len(ins) + len(outs))
                       for part, (ins, outs) in zip(plan.parts, plan.slots)]
            self._functions[name] = Function(sig, python_glue(plan, len(sig.inputs), callers),
                                             keepalive=library)
        # The library file (export_library and the cache copy it) lives as
        # long as the executable.
        weakref.finalize(self, shutil.rmtree, str(parts.directory), ignore_errors=True)

    def _where(self) -> str:
        return "compiled functions"


def _load_or_stub(path, sigs: dict):
    """The library the LLVM tools path linked, loaded; where it holds code
    for a CPU whose features this machine lacks (``compile``'s
    ``cannot_run``: its functions refuse to run), a stand-in without
    functions, so that it is still exported and cached, as the JIT's code is."""
    from .errors import TargetMismatchError
    from .loader import load
    try:
        return load(path)
    except TargetMismatchError:
        from types import SimpleNamespace
        return SimpleNamespace(path=Path(path), signatures=sigs, _functions={})


def _library_caller(library, name: str, count: int):
    """``call(descriptor pointers)`` of a loaded library's ``_mlir_ciface_<name>``."""
    import ctypes
    cfn = getattr(library._dll, "_mlir_ciface_" + name)
    cfn.restype = None
    cfn.argtypes = [ctypes.c_void_p] * count

    def call(ptrs):
        cfn(*ptrs)
    return call


def _lowered_again(exe) -> str:
    """The lowered text of ``exe._module_text`` (the functions
    ``exe._requested``), lowered on first use and kept in ``exe._lowered``."""
    if exe._lowered is None:
        with make_context():
            module = ir.Module.parse(exe._module_text)
            lowered, _ = lower(module, exe.options, exe._requested)
            with lowered.context:
                exe._lowered = print_module(lowered)
    return exe._lowered


def _printed_once(exe, attr: str) -> str:
    """``exe.<attr>``, the lowered module's text: printed from
    ``exe._lowered_module`` on first use (which is then let go)."""
    if getattr(exe, attr) is None:
        module = exe._lowered_module
        with module.context:
            setattr(exe, attr, print_module(module))
        exe._lowered_module = None
    return getattr(exe, attr)


def lower(module, options: CompileOptions, functions=None) -> tuple[ir.Module, dict]:
    """A lowered copy of ``module`` (left untouched) and the signatures of
    its public functions (only ``functions``, when given: the others become
    private, so symbol-dce drops them before lowering)."""
    if options.target not in TARGETS:
        raise CompileError(f"unknown target '{options.target}' "
                           f"(expected one of: {', '.join(TARGETS)})")
    src = as_operation(module)
    ctx = make_context()
    with ctx:
        copy = ir.Module.parse(print_module(src, debug_info=True, segments=True))
        sigs = select_functions(copy.operation, functions)
        if functions is not None and set(functions) - set(sigs):
            missing = sorted(set(functions) - set(sigs))
            raise CompileError(f"no public function @{missing[0]} to compile; the module has: "
                               + ", ".join(sorted(signature_of(f).name
                                                  for f in public_functions(src))))
        if not sigs:
            raise CompileError("the module has no public function with a body to compile")
        try:
            if options.target == "cpu":
                from ..conversion.cpu.pipeline import lower_to_llvm
                lower_to_llvm(copy.operation, opt_level=options.opt_level, cpu=options.cpu,
                              threads=options.threads, kernels=options.kernels)
            else:
                from ..conversion.gpu.nvvm import lower_to_nvvm
                lower_to_nvvm(copy.operation, chip=options.chip, opt_level=options.opt_level,
                              precision=options.precision,
                              compute_dtype=options.compute_dtype)
        except ir.MLIRError as err:
            raise CompileError(_compat.format_mlir_error(err)) from None
    return copy, sigs


def _host_problem(cpu: str) -> str | None:
    """Why code compiled for ``cpu`` cannot run on this machine (None: it
    can).  A CPU of another architecture is a CompileError: LLVM's JIT
    cannot even make its code (it ended the process: "64-bit code requested
    on a subtarget that doesn't support it")."""
    if cpu == "host":
        return None
    from ..conversion.cpu.host import NAMED_TARGETS, detect_host, missing_features
    target, host = NAMED_TARGETS[cpu], detect_host()
    if target.arch != host.arch:
        raise CompileError(f"cpu '{cpu}' is an {target.arch} CPU and this machine is "
                           f"{host.arch}: gradir.compile makes code for this machine "
                           f"(gradir-opt --rlx-lower-to-llvm='cpu={cpu}' lowers for that CPU)")
    missing = missing_features(target.features, host)
    if missing:
        return (f"the code was compiled for cpu {cpu} and needs CPU features this machine "
                f"({host.model or host.name}) lacks: {', '.join(missing)}; "
                f"export it (exe.export_library) for a machine that has them")
    return None


def _runnable(exe, cannot_run: str | None):
    """``exe``, whose functions refuse to run when ``cannot_run`` says why
    (its export still works)."""
    exe._cannot_run = cannot_run
    return exe


def _kernels_enabled(kernels, threads: int) -> bool:
    """The ``kernels`` option of ``compile`` resolved (see there)."""
    if kernels is not None:
        if not isinstance(kernels, bool):
            raise TypeError(f"kernels must be None, True or False, not {kernels!r}")
        return kernels
    flag = os.environ.get("GRADIR_KERNELS", "").strip().lower()
    if flag in ("1", "on", "true", "yes"):
        return True
    if flag in ("0", "off", "false", "no"):
        return False
    if flag:
        raise CompileError(f"GRADIR_KERNELS must be 0 or 1, not {flag!r}")
    return True


def compile(module, target: str = "cpu", *, opt_level: int = 3, chip: str = "sm_90",
            keep_resident=(), cpu: str = "host", cache=None, functions=None,
            threads: int | None = None, kernels: bool | None = None,
            precision: str = "fp32", compute_dtype: str | None = None,
            sm_count: int | None = None) -> Executable:
    """Compiles every public function (or those of ``functions``) of an rlx
    module for ``target``.

        exe = gradir.compile(module)
        loss, gx, gw = exe["main_adjoint"](x, w)

    ``cpu`` (target "cpu"): the CPU to generate code for, "host" (this
    machine) or an LLVM CPU name of ``gradir.conversion.cpu.host.NAMED_TARGETS``
    ("x86-64-v3" for AVX2, "x86-64-v4", "skylake-avx512", ...); the schedule's
    register tiles and LLVM's target-cpu/features follow it.

    ``threads`` (target "cpu"): how many threads the compiled code runs its
    parallel loops on (matmul column strips, elementwise ops, the blocks of
    long sums, convolution batches), through LLVM's OpenMP runtime.  Fixed
    at compile time: None means ``$GRADIR_NUM_THREADS``, else
    ``$OMP_NUM_THREADS``, else the cores this process may run on
    (``os.sched_getaffinity``), read when ``compile`` runs.  1 gives
    single-threaded code with no runtime.  Results are bitwise identical
    from run to run, and at every thread count.

    ``cache``: the persistent compile cache (``runtime/cache.py``; target
    "cuda": ``runtime/cuda_cache.py``): None follows
    ``GRADIR_CACHE``/``GRADIR_CACHE_DIR`` (on by default, under
    ``~/.cache/gradir``), False turns it off for this call, True turns it on,
    a path uses that directory.  ``functions``: names of the public functions
    to compile (default: all); the others are not lowered nor compiled.

    ``kernels`` (target "cpu", ``opt_level`` 1 and more): 2-D f32/f64
    matmuls call gradir's matmul kernels, compiled once per CPU into a
    runtime library (``runtime/kernels.py``), instead of each being
    compiled as a register-tiled loop nest of its own shapes; the results
    are bitwise the same (at every thread count), the compile several times
    faster per matmul, the code as fast (README, "Matmul kernels").  Max
    pools with 2x2 windows of stride 2, their backward and the average
    pools' backward call the library's vectorized pooling kernels
    (``rlx-pool-kernels``; bitwise the same results).  None: ``$GRADIR_KERNELS`` (0 or 1), else on.

    ``precision`` (target "cuda"): "fp32" (exact fp32 matmuls and
    convolutions), "tf32" or its alias "high" (TF32 tensor cores, f32
    accumulation; sm_80+).  ``compute_dtype`` (target "cuda"): None, or
    "bf16" to round f32 matmul and convolution operands to bf16 for bf16
    tensor cores (f32 accumulation and results; sm_80+).  docs/gpu.md,
    "Tensor cores and precision".  ``sm_count`` (target "cuda"): the GPU's
    multiprocessors, which the GEMM kernels' tile size follows (a GEMM of
    fewer tiles than multiprocessors takes smaller ones); None: 132 (H100,
    H200).  The CPU target takes only the defaults.
    """
    if not hasattr(module, "operation") and not isinstance(module, ir.Operation):
        raise TypeError(f"gradir.compile expects an MLIR module (gradir.parse(text)), "
                        f"not {type(module).__name__}")
    if as_operation(module).name != "builtin.module":
        # (a func.func op gave an IndexError from the bindings)
        raise TypeError(f"gradir.compile expects an MLIR module (gradir.parse(text)), not "
                        f"a '{as_operation(module).name}' op")
    if isinstance(opt_level, bool) or not isinstance(opt_level, int) or not 0 <= opt_level <= 3:
        raise CompileError(f"opt_level must be an integer from 0 to 3, not {opt_level!r}")
    from ..conversion.cpu.host import NAMED_TARGETS
    if cpu != "host" and cpu not in NAMED_TARGETS:
        raise CompileError(f"unknown cpu '{cpu}' (expected host or one of: "
                           f"{', '.join(sorted(NAMED_TARGETS))})")
    from ..conversion.cpu.host import resolve_threads
    try:
        threads = resolve_threads(threads) if target == "cpu" else 1
    except ValueError as err:
        raise CompileError(str(err)) from None
    from ..conversion.gpu.nvvm import PRECISIONS, chip_problem, precision_problem
    if target == "cuda":
        problem = chip_problem(chip) or precision_problem(chip, precision, compute_dtype)
        if problem:
            raise CompileError(problem)
        precision = PRECISIONS[precision]
    elif precision_problem(None, precision, compute_dtype):
        raise CompileError(precision_problem(None, precision, compute_dtype))
    elif PRECISIONS[precision] != "fp32" or compute_dtype is not None:
        raise CompileError(f"precision={precision!r} and compute_dtype={compute_dtype!r}: "
                           "target 'cpu' computes in the program's own types (precision "
                           "'fp32', compute_dtype None); these options are for target 'cuda'")
    if sm_count is not None and (target != "cuda" or isinstance(sm_count, bool)
                                 or not isinstance(sm_count, int) or sm_count < 1):
        raise CompileError(f"sm_count must be None or a positive integer for target 'cuda', "
                           f"not {sm_count!r}" + (f" (target {target!r})"
                                                   if target != "cuda" else ""))
    kernels = target == "cpu" and opt_level >= 1 and _kernels_enabled(kernels, threads)
    options = CompileOptions(target, opt_level, chip, tuple(keep_resident), cpu=cpu,
                             threads=threads, kernels=kernels, precision=precision,
                             compute_dtype=compute_dtype)
    cannot_run = _host_problem(cpu) if target == "cpu" else None
    if cache is not None and not isinstance(cache, (bool, str, os.PathLike)):
        raise TypeError(f"cache must be None, True, False or a directory, not {cache!r}")
    if functions is not None:
        if isinstance(functions, str):
            functions = (functions,)
        functions = tuple(dict.fromkeys(functions))
        if not functions or not all(isinstance(f, str) for f in functions):
            raise TypeError(f"functions must name at least one function, not {functions!r}")
    if target == "cuda":
        from . import cache as _cache
        from .cuda import compile_cuda
        sm_count = 132 if sm_count is None else sm_count
        directory = _cache.cache_dir(cache)
        if directory is not None:       # the compile cache (cuda_cache.py)
            from .cuda_cache import compile_cached
            return compile_cached(module, options, directory, functions=functions,
                                  sm_count=sm_count)
        return compile_cuda(module, options, functions=functions, sm_count=sm_count)
    # --- issue 14: the persistent compile cache (runtime/cache.py) ---
    from . import cache as _cache
    directory = _cache.cache_dir(cache) if target == "cpu" else None
    key = None
    if directory is not None:
        text = print_module(as_operation(module), segments=True)
        key = _cache.cache_key(text, options, functions)
        lib = _cache.lookup(directory, key)
        if lib is not None and not interface_matches(as_operation(module), lib.signatures,
                                                     functions):
            # another module's library under this key (the folder was written
            # by someone else): its code must not run for this module
            _cache.discard_entry(directory, key, "holds functions whose signatures are not "
                                                 "this module's")
            lib = None
        if lib is not None:
            return _runnable(CachedExecutable(lib, text, options, functions), cannot_run)
    # --- end issue 14 ---
    # --- issue 14: large functions lowered and compiled in parts, at once (partition.py) ---
    if target == "cpu":
        from .partition import compile_parts
        parts = compile_parts(module, options, functions)
        if parts is not None and parts.library is not None:
            # issue 14: parts through the LLVM tools, linked with the glue already
            exe = PartitionedToolchainExecutable(parts, options, functions)
            if directory is not None:
                exe.cache_hit = False
                exe.cache_path = directory / f"{key}.so"
                _cache.store_library(directory, key, exe._library.path)
            return _runnable(exe, cannot_run)
        if parts is not None:
            exe = PartitionedExecutable(parts, options, functions)
            if directory is not None:
                exe.cache_hit = False
                exe.cache_path = directory / f"{key}.so"
                _cache.store(directory, key, exe, exe._engines)
            return _runnable(exe, cannot_run)
    # --- end issue 14 ---
    lowered, sigs = lower(module, options, functions)
    # --- issue 14: LLVM through the tool binaries, loop nests outlined (llvm_tools.py) ---
    from . import llvm_tools
    llvm_ir = None
    if (options.target == "cpu" and llvm_opt_level(options.opt_level) >= 1
            and llvm_tools.mode() != "off"):
        with lowered.context:
            try:
                llvm_ir = _compat.translate_to_llvm_ir(lowered)
            except Exception as err:    # noqa: BLE001 - the bindings raise RuntimeError
                raise CompileError(f"translating the lowered module to LLVM IR failed: {err}") \
                    from None
        if llvm_tools.enabled(llvm_ir):
            workers = llvm_tools.jobs()     # a bad GRADIR_LLVM_JOBS is an error, not a fallback
            try:
                exe = ToolchainExecutable.build(lowered, llvm_ir, sigs, options, workers)
            except CompileError as err:     # a broken tool install: ExecutionEngine still works
                import warnings
                warnings.warn(f"gradir: the LLVM tools path failed, compiling with "
                              f"ExecutionEngine instead: {str(err)[:500]}", RuntimeWarning,
                              stacklevel=2)
            else:
                if directory is not None:
                    exe.cache_hit = False
                    exe.cache_path = directory / f"{key}.so"
                    _cache.store_library(directory, key, exe._library.path)
                return _runnable(exe, cannot_run)
    # --- end issue 14 ---
    with lowered.context:
        # PIC: the object the JIT compiled can be linked into a library (the
        # cache entry, export_library) without running LLVM again; no run-time
        # cost measured (bench/compile_time.py --llvm-levels runs PIC code).
        exe = Executable(lowered, sigs, options, pic=True, llvm_ir=llvm_ir)
    if directory is not None:
        exe.cache_hit = False
        exe.cache_path = directory / f"{key}.so"
        _cache.store(directory, key, exe, exe._engine)
    return _runnable(exe, cannot_run)
