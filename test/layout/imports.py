# RUN: %PYTHON %s %gradir_src/python/gradir | FileCheck %s
"""The architecture of DESIGN.md, checked from the code's own imports.

Every ``import`` and ``from ... import`` in python/gradir (function-local ones
included) is an edge between two modules.  The packages may only import along
the arrows (tools -> runtime -> conversion -> dialects -> core; tools ->
transforms -> autodiff -> dialects -> core; every pass module -> passes ->
core; the pass table gradir/registry.py -> transforms, conversion), nothing
in the product imports ``testing``, and no two modules import each other,
directly or through others.  Also a script:

    python test/layout/imports.py python/gradir        # exits 1 on a violation
"""

import ast
import os
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), "..", "..", "python", "gradir"))

# layer -> the layers it may import (itself included).  "core" is gradir/_compat/ and
# gradir/ir.py; "api" is the facade gradir/__init__.py.
ALLOWED = {
    "core": {"core"},
    "passes": {"core"},
    "dialects": {"core"},
    "interp": {"core"},
    "autodiff": {"core", "dialects"},
    "transforms": {"core", "passes", "dialects", "autodiff"},
    "conversion": {"core", "passes", "dialects"},
    "runtime": {"core", "passes", "dialects", "conversion"},
    # gradir/registry.py: the pass table names every pass module.
    "registry": {"core", "passes", "transforms", "conversion"},
    "frontends": {"core", "dialects", "api"},
    "api": {"core", "passes", "dialects", "interp", "runtime", "frontends"},
    "tools": {"core", "passes", "dialects", "interp", "autodiff", "transforms", "conversion",
              "runtime", "frontends", "api", "registry"},
    "testing": {"core", "passes", "dialects", "interp", "autodiff", "transforms", "conversion",
                "runtime", "frontends", "api", "registry"},
}
PRODUCT = set(ALLOWED) - {"testing"}


def modules() -> dict[str, str]:
    out = {}
    for dirpath, _, files in os.walk(ROOT):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, os.path.dirname(ROOT))[:-3].replace(os.sep, ".")
                out[rel[:-len(".__init__")] if rel.endswith(".__init__") else rel] = path
    return out


def layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "api"
    if parts[1] in ("_compat", "ir"):
        return "core"
    return parts[1]


def edges(mods: dict[str, str]) -> dict[str, set[str]]:
    out = {}
    for mod, path in mods.items():
        is_pkg = path.endswith("__init__.py")
        tree = ast.parse(open(path, encoding="utf-8").read(), path)
        targets = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names if a.name.split(".")[0] == "gradir")
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    base = base[:len(base) - (node.level - 1)]
                    base = ".".join(base + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                if base.split(".")[0] != "gradir":
                    continue
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.add(sub if sub in mods else base)
        out[mod] = {t for t in targets if t in mods and t != mod}
    return out


def find_cycle(graph: dict[str, set[str]]):
    """One import cycle as a list of modules, or None (iterative DFS)."""
    color = {m: 0 for m in graph}
    for start in sorted(graph):
        if color[start]:
            continue
        stack = [(start, iter(sorted(graph[start])))]
        path = [start]
        color[start] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                color[node] = 2
                stack.pop()
                path.pop()
                continue
            if color[nxt] == 1:
                return path[path.index(nxt):] + [nxt]
            if color[nxt] == 0:
                color[nxt] = 1
                stack.append((nxt, iter(sorted(graph[nxt]))))
                path.append(nxt)
    return None


def main() -> int:
    mods = modules()
    graph = edges(mods)
    problems = []
    for mod, targets in sorted(graph.items()):
        src = layer(mod)
        if src not in ALLOWED:
            problems.append(f"{mod}: package '{src}' has no place in the architecture")
            continue
        for t in sorted(targets):
            dst = layer(t)
            if dst != src and dst not in ALLOWED[src]:
                problems.append(f"{mod} imports {t}: '{src}' may not import '{dst}'")
    cycle = find_cycle(graph)
    if cycle:
        problems.append("import cycle: " + " -> ".join(cycle))
    for p in problems:
        print("VIOLATION:", p)
    n_edges = sum(len(t) for t in graph.values())
    print(f"checked {len(mods)} modules, {n_edges} imports: "
          f"{'ok' if not problems else f'{len(problems)} violations'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

# CHECK-NOT: VIOLATION
# CHECK: checked {{[0-9]+}} modules, {{[0-9]+}} imports: ok
