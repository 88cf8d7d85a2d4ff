"""The generated parts of README.md and docs/: what can be read off the code
is written from the code, between markers, and checked by a test
(``test/docs/reference.py``) so that it cannot drift.

    <!-- BEGIN GENERATED passes -->
    ...written by this module...
    <!-- END GENERATED passes -->

Blocks:
  ``passes``      every gradir pass with its options, from the pass registry (the
                  same data as ``gradir-opt --list-passes``)
  ``torch-ops``   the aten ops the PyTorch importer maps
                  (``gradir.frontends.torch.supported_ops()``)
  ``vjp-rules``   the ops with a VJP rule, by rule module, and the ops that get no
                  gradient or none yet (``gradir.autodiff.rules``)
  ``jvp-rules``   the ops with a JVP rule (forward mode), by rule module, and which
                  take no batched tangents

    python -m gradir.tools.reference --write README.md docs/*.md   # regenerate
    python -m gradir.tools.reference --check README.md docs/*.md   # exit 1 if stale

A page may hold any of the blocks; ``--check`` also fails when a block named
here appears on no page.
"""

from __future__ import annotations

import difflib
import re
import sys

__all__ = ["BLOCKS", "generate", "update", "main"]

_BEGIN = re.compile(r"^<!-- BEGIN GENERATED ([a-z-]+) -->\n", re.M)


def _md(text: str) -> str:
    """Docstring markup (``x``) as Markdown (`x`); pipes escaped for tables."""
    return text.replace("``", "`").replace("|", "\\|")


def passes_block() -> str:
    from ..passes import show_default
    from ..registry import get_pass_class, pass_names

    out = []
    for name in pass_names():
        cls = get_pass_class(name)
        out.append(f"### `{name}`\n\n{_md(cls.description())}\n")
        opts = cls.options()
        if not opts:
            out.append("No options.\n")
            continue
        out.append("| option | type | default | meaning |\n|---|---|---|---|")
        for opt, tname, default, help_ in opts:
            shown = "" if default is None else show_default(default)
            out.append(f"| `{opt}` | `{_md(tname)}` | {f'`{shown}`' if shown else ''} "
                       f"| {_md(help_)} |")
        out.append("")
    return "\n".join(out)


def torch_ops_block() -> str:
    from ..frontends.torch import supported_ops

    ops = supported_ops()
    by_op: dict[str, list[str]] = {}
    for full in ops:
        _, op, overload = full.split(".", 2)
        by_op.setdefault(op, []).append(overload)
    lines = [f"{len(ops)} aten ops (op: overloads):", ""]
    for op in sorted(by_op):
        lines.append(f"- `{op}`: {', '.join(f'`{o}`' for o in sorted(by_op[op]))}")
    return "\n".join(lines) + "\n"


def vjp_rules_block() -> str:
    from ..autodiff import rules

    rules._load_all()
    groups: dict[str, list[str]] = {}
    for op, fn in rules.VJP_RULES.items():
        groups.setdefault(fn.__module__.rsplit(".", 1)[-1], []).append(op)
    lines = [f"{len(rules.VJP_RULES)} ops have a VJP rule (`python/gradir/autodiff/rules/`):",
             ""]
    for mod in sorted(groups):
        names = ", ".join(f"`{op}`" for op in sorted(groups[mod]))
        lines.append(f"- `rules/{mod}.py`: {names}")
    lines += ["", "Differentiated by the pass itself: "
              + ", ".join(f"`{op}`" for op in sorted(rules.DIFFERENTIATED_BY_PASS)) + ".",
              "",
              "No gradient (comparisons, creation ops, constants): "
              + ", ".join(f"`{op}`" for op in sorted(rules.NON_DIFFERENTIABLE)) + ".",
              ""]
    for op, why in sorted(rules.WITHOUT_RULE.items()):
        lines.append(f"No rule yet for `{op}`: {why}.")
    return "\n".join(lines) + "\n"


def jvp_rules_block() -> str:
    from ..autodiff import rules

    rules._load_all()
    groups: dict[str, list[str]] = {}
    unbatched = []
    for op, (fn, batched) in rules.JVP_RULES.items():
        groups.setdefault(fn.__module__.rsplit(".", 1)[-1], []).append(op)
        if not batched:
            unbatched.append(op)
    lines = [f"{len(rules.JVP_RULES)} ops have a JVP rule (`python/gradir/autodiff/rules/`):",
             ""]
    for mod in sorted(groups):
        names = ", ".join(f"`{op}`" for op in sorted(groups[mod]))
        lines.append(f"- `rules/{mod}.py`: {names}")
    lines.append("")
    if unbatched:
        lines.append("Called once per basis vector in a batched sweep (no batched form): "
                     + ", ".join(f"`{op}`" for op in sorted(unbatched)) + ".")
    else:
        lines.append("Every rule takes batched tangents (a Jacobian's whole basis at once).")
    missing = sorted(set(rules.VJP_RULES) - set(rules.JVP_RULES))
    if missing:
        lines += ["", "A VJP rule but no JVP rule yet: "
                  + ", ".join(f"`{op}`" for op in missing) + "."]
    return "\n".join(lines) + "\n"


BLOCKS = {"passes": passes_block, "torch-ops": torch_ops_block, "vjp-rules": vjp_rules_block,
          "jvp-rules": jvp_rules_block}


def generate(name: str) -> str:
    return BLOCKS[name]()


def update(text: str, cache: dict[str, str], seen: set[str], where: str) -> str:
    """``text`` with each generated block rewritten."""
    out, pos = [], 0
    for m in _BEGIN.finditer(text):
        name = m.group(1)
        if name not in BLOCKS:
            raise SystemExit(f"{where}: unknown generated block '{name}' "
                             f"(known: {', '.join(sorted(BLOCKS))})")
        end = f"<!-- END GENERATED {name} -->"
        stop = text.find(end, m.end())
        if stop < 0:
            raise SystemExit(f"{where}: generated block '{name}' has no '{end}'")
        if name not in cache:
            cache[name] = generate(name)
        seen.add(name)
        out.append(text[pos:m.end()])
        out.append(cache[name])
        pos = stop
    out.append(text[pos:])
    return "".join(out)


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in ("--write", "--check"):
        print(__doc__)
        return 2
    mode, paths = args[0], args[1:]
    cache: dict[str, str] = {}
    seen: set[str] = set()
    stale = 0
    for path in paths:
        with open(path, encoding="utf-8") as f:
            old = f.read()
        new = update(old, cache, seen, path)
        if new == old:
            continue
        if mode == "--write":
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
            print(f"updated {path}")
        else:
            stale += 1
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(True), new.splitlines(True), path, path + " (generated)"))
            print(f"STALE: {path} (python -m gradir.tools.reference --write {path})")
    missing = sorted(set(BLOCKS) - seen)
    if mode == "--check" and missing:
        print("MISSING: no page holds the generated block(s) " + ", ".join(missing))
        stale += 1
    if mode == "--check":
        print(f"generated blocks: {len(seen)} checked in {len(paths)} pages, "
              f"{'up to date' if not stale else 'STALE'}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
