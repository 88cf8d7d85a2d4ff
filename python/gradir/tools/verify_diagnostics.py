"""--verify-diagnostics for gradir-opt, as mlir-opt implements it.

Annotations in the input, each matched against the diagnostics produced:

    // expected-error @+1 {{substring of the message}}
    // expected-warning {{...}}          (same line)
    // expected-note @-2 {{...}}
    // expected-remark @above {{...}}    (@below too: the nearest line that is
                                         not itself an annotation; @unknown)
    // expected-error-re {{regex with {{[0-9]+}} parts}}

Every diagnostic must be expected and every expectation met.  Stricter
than mlir-opt where a typo would make a test unable to fail: a comment that
starts with ``expected-error`` (or warning/note/remark) but is not an
annotation (``{{`` unclosed, an unknown designator) and an ``-re`` pattern
that is not a valid regex are errors at the annotation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Expectation", "parse_expectations", "annotation_problems", "check"]

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


# A comment that starts like an annotation; one that ``_EXPECT`` does not
# read was silently no expectation at all (a test that cannot fail).
_LOOKS_LIKE = re.compile(r"//\s*(?P<ann>expected-(?:error|warning|note|remark)(?:-re)?)\b")


def _regex_of(pattern: str) -> str:
    """``a {{[0-9]+}} b``: text outside ``{{ }}`` is literal (mlir's -re),
    also when there is no ``{{ }}`` part."""
    out, pos = [], 0
    for m in re.finditer(r"\{\{(.*?)\}\}", pattern):
        out.append(re.escape(pattern[pos:m.start()]))
        out.append("(?:" + m.group(1) + ")")
        pos = m.end()
    out.append(re.escape(pattern[pos:]))
    return "".join(out)


def annotation_problems(text: str, source_name: str) -> list:
    """Errors (``Diag``) at the annotations of ``text`` that cannot work: a
    comment starting with ``expected-<severity>`` that is no annotation, an
    ``-re`` pattern that is not a valid regex."""
    from .driver import Diag

    out = []
    for idx, line in enumerate(text.split("\n"), start=1):
        loose = _LOOKS_LIKE.search(line)
        if loose is None:
            continue
        m = _EXPECT.search(line)
        where = f"{source_name}:{idx}:{loose.start('ann') + 1}"
        if m is None:
            out.append(Diag("error", where, f"malformed '{loose['ann']}' annotation: expected "
                            f"'{loose['ann']} [@+N|@-N|@above|@below|@unknown] [*N] "
                            "{{message}}'"))
        elif m["re"]:
            try:
                re.compile(_regex_of(m["msg"]))
            except re.error as err:
                out.append(Diag("error", where, f"invalid regex in '{loose['ann']}': {err}"))
    return out


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

    problems = annotation_problems(text, source_name)
    if problems:
        return problems
    expectations = parse_expectations(text)
    remaining = {id(e): e.count for e in expectations}
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
