"""Property tests of the ncd syntax and of napkin-opt's handling of bad input.

Random well-formed diagrams must print, parse and print again to the same text (custom
and generic forms). Malformed text (truncated, resized, unknown ops, random bytes) must
get a diagnostic and a non-zero exit from napkin-opt, never a Python traceback. A quote or
another delimiter typed into a type or an attribute dictionary must get its answer within
two seconds (issue 22: xDSL's lexer once spent minutes on an unclosed string literal).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from xdsl.parser import Parser
from xdsl.printer import Printer

from napkin_ir import registry
from napkin_ir.cli.opt import main as opt_main

CTX = registry.make_context()
AXES = ["b", "h", "i", "j", "d", "k", "n", "x_1"]
ETYPES = ["bf16", "f16", "f32"]
OPS = ["contract", "map", "reduce", "softmax", "l2norm", "mask"]
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# each stray-delimiter case is a few milliseconds; 2,000 of them cover the places well
STRAY_SETTINGS = settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TIME_LIMIT_S = 2.0
EXAMPLES = [
    "".join(line for line in path.read_text().splitlines(keepends=True) if not line.startswith("//"))
    for path in sorted((Path(__file__).resolve().parents[3] / "examples").glob("*.mlir"))
]


def _ty(axes, sizes, et):
    return "!ncd.tensor<" + ", ".join(f"{a}={sizes[a]}" for a in axes) + (" : " if axes else ": ") + et + ">"


def _float_text(x: float) -> str:
    t = repr(x)
    return t if "." in t or "inf" in t else t.replace("e", ".0e") if "e" in t else t + ".0"


@st.composite
def diagrams(draw) -> str:
    sizes = {a: draw(st.integers(1, 9)) for a in AXES}
    perm = lambda xs: draw(st.permutations(list(xs)))  # noqa: E731
    subset = lambda xs, lo=0: draw(st.lists(st.sampled_from(list(xs)), min_size=lo, unique=True)) if xs else []  # noqa: E731
    values: list[tuple[str, list[str], str]] = []
    args = []
    for n in range(draw(st.integers(1, 3))):
        axes, et = subset(AXES, 1), draw(st.sampled_from(ETYPES))
        values.append((f"%a{n}", axes, et))
        args.append(f"%a{n}: {_ty(axes, sizes, et)}")
    lines = []
    for n in range(draw(st.integers(0, 8))):
        name, axes, et = draw(st.sampled_from(values))
        t = _ty(axes, sizes, et)
        kind = draw(st.sampled_from(OPS))
        res = f"%v{n}"
        if kind in ("contract", "map") and draw(st.booleans()):
            same = [v for v in values if v[2] == et]
            oname, oaxes, _ = draw(st.sampled_from(same))
            ot = _ty(oaxes, sizes, et)
            union = list(dict.fromkeys(axes + oaxes))
            if kind == "contract":
                over = subset([a for a in axes if a in oaxes])
                raxes, ret = perm([a for a in union if a not in over]), draw(st.sampled_from([et, "f32"]))
                lines.append(f"{res} = ncd.contract {name}, {oname} over [{', '.join(over)}] : {t}, {ot} -> {_ty(raxes, sizes, ret)}")
            else:
                fn = draw(st.sampled_from(["add", "sub", "mul", "div", "max"]))
                raxes, ret = perm(union), et
                lines.append(f"{res} = ncd.map {fn} {name}, {oname} : {t}, {ot} -> {_ty(raxes, sizes, ret)}")
        elif kind == "reduce" and axes:
            along = subset(axes, 1)
            raxes, ret = perm([a for a in axes if a not in along]), et
            red = draw(st.sampled_from(["sum", "max"]))
            lines.append(f"{res} = ncd.reduce {red} {name} along [{', '.join(along)}] : {t} -> {_ty(raxes, sizes, ret)}")
        elif kind in ("softmax", "l2norm") and axes:
            raxes, ret = perm(axes), et
            scale = ""
            if kind == "softmax" and draw(st.booleans()):
                scale = " scale " + _float_text(draw(st.floats(-1e6, 1e6, allow_nan=False, width=32)))
            lines.append(f"{res} = ncd.{kind} {name} along {draw(st.sampled_from(axes))}{scale} : {t} -> {_ty(raxes, sizes, ret)}")
        elif kind == "mask" and len(axes) >= 2:
            r, c = draw(st.permutations(axes))[:2]
            fill = draw(st.sampled_from(["-inf", "inf", "0.0", "-1.5e+30"]))
            raxes, ret = perm(axes), et
            lines.append(f"{res} = ncd.mask causal {name} keep {r} >= {c} fill {fill} : {t} -> {_ty(raxes, sizes, ret)}")
        else:
            fn = draw(st.sampled_from(["exp", "exp2", "neg", "scale", "cast"]))
            by = " by " + _float_text(draw(st.floats(-100, 100, allow_nan=False, width=32))) if fn == "scale" else ""
            raxes, ret = perm(axes), draw(st.sampled_from(ETYPES)) if fn == "cast" else et
            lines.append(f"{res} = ncd.map {fn} {name}{by} : {t} -> {_ty(raxes, sizes, ret)}")
        values.append((res, raxes, ret))
    last, laxes, let = values[-1]
    lt = _ty(laxes, sizes, let)
    body = "\n".join("  " + line for line in lines)
    return f"func.func @g({', '.join(args)}) -> {lt} {{\n{body}\n  func.return {last} : {lt}\n}}\n"


def _print(module, generic=False) -> str:
    out = io.StringIO()
    Printer(stream=out, print_generic_format=generic).print_op(module)
    return out.getvalue()


def _parse(text: str):
    module = Parser(CTX, text).parse_module()
    module.verify()
    return module


@SETTINGS
@given(diagrams())
def test_print_parse_print_is_stable(text):
    first = _print(_parse(text))
    assert _print(_parse(first)) == first
    generic = _print(_parse(first), generic=True)
    assert _print(_parse(generic)) == first


def _napkin_opt(data: bytes) -> tuple[int, str, str]:
    """Run napkin-opt in-process on `data`; any exception but SystemExit fails the test."""
    with tempfile.NamedTemporaryFile("wb", suffix=".mlir", delete=False) as fh:
        fh.write(data)
    out, err = io.StringIO(), io.StringIO()
    code = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            opt_main([fh.name])
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    finally:
        os.unlink(fh.name)
    assert "Traceback" not in err.getvalue() + out.getvalue()
    return code, out.getvalue(), err.getvalue()


def _assert_diagnostic(code: int, err: str) -> None:
    assert code != 0
    assert err.startswith("napkin-opt: error: "), err
    assert err.count("napkin-opt: error:") == 1


@SETTINGS
@given(diagrams(), st.data())
def test_truncated_text_is_diagnosed(text, data):
    cut = data.draw(st.integers(1, text.rindex("}") - 1))  # an empty input is a valid empty module
    # a signature alone (cut before the body, or after the arguments) is a valid declaration
    signature_end = text.index(" {\n")
    arguments_end = text.index(") -> ") + 1 if ") -> " in text[:signature_end] else signature_end
    assume(text[:cut].rstrip() not in (text[:signature_end], text[:arguments_end]))
    _assert_diagnostic(*_napkin_opt(text[:cut].encode())[::2])


@SETTINGS
@given(diagrams(), st.data())
def test_wrong_result_size_is_diagnosed(text, data):
    lines = text.splitlines()
    op_lines = [n for n, line in enumerate(lines) if " = ncd." in line and re.search(r"=\d+", line.split(" -> ")[-1])]
    assume(op_lines)
    n = data.draw(st.sampled_from(op_lines))
    head, _, tail = lines[n].rpartition(" -> ")
    sizes = list(re.finditer(r"=(\d+)", tail))
    m = data.draw(st.sampled_from(sizes))
    new = int(m.group(1)) + data.draw(st.integers(1, 50))
    lines[n] = head + " -> " + tail[: m.start()] + f"={new}" + tail[m.end() :]
    _assert_diagnostic(*_napkin_opt("\n".join(lines).encode())[::2])


@SETTINGS
@given(diagrams(), st.from_regex(r"[a-z][a-z0-9_]{0,10}", fullmatch=True))
def test_unknown_op_is_diagnosed(text, name):
    assume(name not in ("contract", "map", "reduce", "softmax", "l2norm", "mask") and " = ncd." in text)
    bad = re.sub(r"= ncd\.\w+", f"= ncd.{name}", text, count=1)
    code, _, err = _napkin_opt(bad.encode())
    _assert_diagnostic(code, err)


@SETTINGS
@given(st.binary(max_size=400))
def test_random_bytes_never_trace_back(data):
    code, out, err = _napkin_opt(data)
    if code == 0:  # only blank input or comments parse: an empty module
        assert out.split() == ["builtin.module", "{", "}"]
    else:
        _assert_diagnostic(code, err)


# -- stray delimiters (issue 22) ----------------------------------------------------------

ATTRIBUTE_ENTRIES = ['napkin.note = "online softmax"', "napkin.tile = 128 : i64", 'napkin.axes = ["i", "j"]', 'napkin.empty = ""', "napkin.fused"]
# the MLIR string quote first; then what people type for one, escapes, and the other openers
# and closers the lexer and the type parsers pair up
DELIMITERS = ['"', "'", "`", "\\", '\\"', '@"', "<", ">", "{", "}", "[", "]", "(", ")", "{-#", "#-}", "//"]
PLACES = {
    "type": re.compile(r"!ncd\.tensor<[^>]*>"),
    "attributes": re.compile(r"\{[^{}\n]*\}"),
    "anywhere": re.compile(r"(?s).+"),
}


@st.composite
def annotated_diagrams(draw) -> str:
    """A diagram (random, or one of the examples) with attribute dictionaries on its
    function and on some of its ops."""
    text = draw(st.one_of(st.sampled_from(EXAMPLES), diagrams()))
    entries = st.lists(st.sampled_from(ATTRIBUTE_ENTRIES), min_size=1, max_size=3, unique=True)
    lines = []
    for line in text.splitlines():
        if line.startswith("func.func "):
            head, _, _ = line.rpartition(" {")
            line = f"{head} attributes {{{', '.join(draw(entries))}}} {{"
        elif " = ncd." in line and draw(st.booleans()):
            head, _, tail = line.partition(" : ")
            line = f"{head} {{{', '.join(draw(entries))}}} : {tail}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def _insert(text: str, delimiter: str, place: str, data) -> str:
    """`text` with `delimiter` typed somewhere in a span of the kind `place` names (anywhere,
    where an earlier insertion has broken every span of that kind)."""
    spans = [m.span() for m in PLACES[place].finditer(text)] or [(0, len(text))]
    start, end = data.draw(st.sampled_from(spans))
    at = data.draw(st.integers(start, end))
    return text[:at] + delimiter + text[at:]


class _TooSlow(BaseException):
    """Not an Exception, so that napkin-opt's last line of defence does not catch it."""


def _napkin_opt_in_time(text: str) -> tuple[int, str, str]:
    """`_napkin_opt`, failing the test when it takes longer than TIME_LIMIT_S."""

    def too_slow(signum, frame):
        raise _TooSlow

    previous = signal.signal(signal.SIGALRM, too_slow)
    signal.setitimer(signal.ITIMER_REAL, TIME_LIMIT_S)
    try:
        return _napkin_opt(text.encode())
    except _TooSlow:
        raise AssertionError(f"napkin-opt took more than {TIME_LIMIT_S} s on:\n{text}") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@SETTINGS
@given(annotated_diagrams())
def test_annotated_diagrams_parse(text):
    """The stray-delimiter tests start from text that parses."""
    _parse(text)


@STRAY_SETTINGS
@given(annotated_diagrams(), st.sampled_from(sorted(PLACES)), st.data())
def test_stray_quote_is_diagnosed_in_time(text, place, data):
    """A line with one quote too many always holds a string literal it does not close."""
    code, _, err = _napkin_opt_in_time(_insert(text, '"', place, data))
    _assert_diagnostic(code, err)


@STRAY_SETTINGS
@given(annotated_diagrams(), st.data())
def test_stray_delimiters_are_answered_in_time(text, data):
    for _ in range(data.draw(st.integers(1, 3))):
        text = _insert(text, data.draw(st.sampled_from(DELIMITERS)), data.draw(st.sampled_from(sorted(PLACES))), data)
    code, out, err = _napkin_opt_in_time(text)
    if code == 0:  # a `//` may comment out what follows it on a line and leave valid IR
        assert out.startswith("builtin.module"), out
    else:
        _assert_diagnostic(code, err)
