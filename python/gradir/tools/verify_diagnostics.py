"""--verify-diagnostics for gradir-opt, as mlir-opt implements it.

Annotations in the input, each matched against the diagnostics produced:

    // expected-error @+1 {{substring of the message}}
    // expected-warning {{...}}          (same line)
    // expected-note @-2 {{...}}
    // expected-remark @above {{...}}    (@below too: the nearest line that is
                                         not itself an annotation; @unknown)
    // expected-error-re {{regex with {{[0-9]+}} parts}}

Every diagnostic must be expected and every expectation met.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Expectation", "parse_expectations", "check"]

_EXPECT = re.compile(
    r"expected-(?P<sev>error|warning|note|remark)(?P<re>-re)?"
    r"(?:\s*@(?P<off>[+-]\d+|above|below|unknown))?(?:\s*\*(?P<count>\d+))?\s*\{\{(?P<msg>.*)\}\}")


@dataclass
class Expectation:
    severity: str
    line: int            # the line the diagnostic must be reported at
    pattern: str
    is_regex: bool
    source_line: int     # where the annotation is written
    count: int = 1
    column: int = 1      # where ``expected-`` starts on source_line

    def matches(self, message: str) -> bool:
        if self.is_regex:
            return re.search(_regex_of(self.pattern), message) is not None
        return self.pattern in message


def _regex_of(pattern: str) -> str:
    """``a {{[0-9]+}} b``: text outside ``{{ }}`` is literal (mlir's -re)."""
    out, pos = [], 0
    for m in re.finditer(r"\{\{(.*?)\}\}", pattern):
        out.append(re.escape(pattern[pos:m.start()]))
        out.append("(?:" + m.group(1) + ")")
        pos = m.end()
    out.append(re.escape(pattern[pos:]))
    if not out or len(out) == 1:
        return pattern
    return "".join(out)


def parse_expectations(text: str) -> list[Expectation]:
    """The annotations of ``text``, with mlir-opt's designator rules: ``@+N`` /
    ``@-N`` count from the annotation's line; ``@below`` means the next line
    that holds no annotation, ``@above`` the last line before it that holds
    none (so stacked annotations all point at the same op); ``@unknown``
    matches a diagnostic without a file location (line 0 here)."""
    out = []
    below: list[Expectation] = []
    last_plain = 0
    for idx, line in enumerate(text.split("\n"), start=1):
        m = _EXPECT.search(line)
        if not m:
            for e in below:
                e.line = idx
            below.clear()
            last_plain = idx
            continue
        off = m["off"]
        if off is None:
            target = idx
        elif off == "above":
            target = last_plain
        elif off == "below":
            target = -1                    # set at the next plain line
        elif off == "unknown":
            target = 0
        else:
            target = idx + int(off)
        e = Expectation(m["sev"], target, m["msg"], bool(m["re"]), idx,
                        int(m["count"] or 1), m.start() + 1)
        if off == "below":
            below.append(e)
        out.append(e)
    return out


def check(text: str, source_name: str, diags) -> list:
    """Returns the problems as diagnostics to print (empty when all match)."""
    from .driver import Diag

    expectations = parse_expectations(text)
    remaining = {id(e): e.count for e in expectations}
    problems = []
    for d in diags:
        line = d.line()
        hit = None
        if line is None or d.file() == source_name:
            want = 0 if line is None else line
            for e in expectations:
                if remaining[id(e)] and e.severity == d.severity and e.line == want \
                        and e.matches(d.message):
                    hit = e
                    break
        if hit is None:
            problems.append(Diag("error", d.location if line is not None else
                                 f"{source_name}:1:1",
                                 f"unexpected {d.severity}: {d.message}"))
            continue
        remaining[id(hit)] -= 1
    for e in expectations:
        if remaining[id(e)]:
            problems.append(Diag("error", f"{source_name}:{e.source_line}:{e.column}",
                                 f"expected {e.severity} \"{e.pattern}\" was not produced"))
    return problems
