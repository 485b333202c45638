#!/usr/bin/python3
"""gen_diff_cases.py -- generate spec/fixtures/diff_cases.lua from PyTorch 1.13.

    /usr/bin/python3 tools/gen_diff_cases.py [out.lua]

A broader differential suite than ../shared/conformance: every unary op of
SPEC §6 over every dtype PyTorch 1.13 has, binary ops on non-contiguous,
expanded, zero-size and zero-dim operands, integer overflow and division by
zero, reductions with dim lists, sort/topk, in-place safe casting, views,
indexing, cat/stack and matmul.  PyTorch is the oracle; only this tool imports
it (the busted spec reads the generated, committed fixture).

The case format is conformance/run.lua's, plus two extensions read by
spec/diff_runner.lua:
  * a tensor operand may carry view={{"method", args...}, ...}: steps applied
    after building it (so operands can be transposed or expanded);
  * complex data are {re, im} pairs (built through T._frombytes).
Conversions to ltensor's conventions happen here: dims and positive
indices/starts become 1-based, returned indices get +1.

Where PyTorch 1.13's CPU build lacks a kernel for float16/bfloat16 (its
"not implemented for 'Half'" errors), the expectation is computed in float32
and rounded back: SPEC §2 computes those dtypes in float32, so this is
ltensor's documented behaviour, not a PyTorch semantic.  uint16/32/64 do not
exist in PyTorch 1.13 and are not covered; complex32 is skipped likewise
(PyTorch 1.13 has almost no complex32 kernels).
"""
import math
import re
import sys

import numpy as np
import torch

torch.set_num_threads(1)
torch.manual_seed(0)

DT = {
    torch.bool: "bool", torch.uint8: "uint8", torch.int8: "int8", torch.int16: "int16",
    torch.int32: "int32", torch.int64: "int64", torch.float16: "float16",
    torch.bfloat16: "bfloat16", torch.float32: "float32", torch.float64: "float64",
    torch.complex64: "complex64", torch.complex128: "complex128",
}
INTS = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]
FLOATS = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
COMPLEX = [torch.complex64, torch.complex128]
ALL = [torch.bool] + INTS + FLOATS + COMPLEX
LOWP = (torch.float16, torch.bfloat16)

cases = []
counters = {}


# ----------------------------------------------------------------- lua text
def lua(v):
    if v is None:
        return "nil"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        if v == -2**63:
            return "math.mininteger"
        return str(v)
    if isinstance(v, float):
        if v != v:
            return "(0/0)"
        if v == math.inf:
            return "(1/0)"
        if v == -math.inf:
            return "(-1/0)"
        r = repr(v)
        if "e" not in r and "." not in r:
            r += ".0"
        return r
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    if isinstance(v, (list, tuple)):
        return "{" + ",".join(lua(x) for x in v) + "}"
    if isinstance(v, dict):
        parts = []
        for k, x in v.items():
            if x is None:
                continue
            parts.append(("%s=" % k if re.match(r"^[A-Za-z_]\w*$", k) else "[%s]=" % lua(k)) + lua(x))
        return "{" + ",".join(parts) + "}"
    raise TypeError(type(v))


# ----------------------------------------------------------------- operands
def flat(t):
    t = t.detach().contiguous().reshape(-1)
    if t.dtype.is_complex:
        t = t.to(torch.complex128)
        return [[float(z.real), float(z.imag)] for z in t.tolist()]
    if t.dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        return [float(x) for x in t.to(torch.float64).tolist()]
    if t.dtype == torch.bool:
        return [bool(x) for x in t.tolist()]
    return [int(x) for x in t.tolist()]


def T(t, view=None):
    """Operand for tensor t (built contiguous, then `view` steps applied)."""
    if t.dim() == 0 and view is None:
        d = flat(t)[0]
        return {"kind": "zerodim", "dtype": DT[t.dtype], "value": d} if not t.dtype.is_complex else \
            {"kind": "tensor", "dtype": DT[t.dtype], "shape": [], "data": [d]}
    return {"kind": "tensor", "dtype": DT[t.dtype], "shape": list(t.shape), "data": flat(t), "view": view}


def I(v):
    return {"kind": "int", "value": v}


def F(v):
    return {"kind": "float", "value": float(v)}


def B(v):
    return {"kind": "bool", "value": v}


def LIST(v):
    return {"kind": "list", "value": v}


def OPTS(v):
    return {"kind": "opts", "value": v}


def DTYPE(d):
    return {"kind": "dtype", "name": DT[d]}


def NIL():
    return {"kind": "nil"}


def STR(s):
    return {"kind": "list", "value": s}  # a plain Lua value


def dim1(d):
    """PyTorch dim (0-based, negative from the end) -> ltensor dim."""
    return d + 1 if d >= 0 else d


def apply_view(t, view):
    """Replay ltensor view steps on the torch side (1-based args -> torch)."""
    for st in view or []:
        name, args = st[0], st[1:]
        if name == "t":
            t = t.t()
        elif name == "transpose":
            t = t.transpose(*[a - 1 if a > 0 else a for a in args])
        elif name == "permute":
            t = t.permute(*[a - 1 if a > 0 else a for a in args])
        elif name == "expand":
            t = t.expand(*args)
        elif name == "narrow":
            d, s, n = args
            t = t.narrow(d - 1 if d > 0 else d, s - 1 if s > 0 else s, n)
        else:
            raise ValueError(name)
    return t


# ----------------------------------------------------------------- expects
def tol_for(dtype, kind="ew"):
    if dtype in (torch.float16, torch.complex32):
        return {"rtol": 2e-3, "atol": 1e-5 if kind == "ew" else 1e-2}
    if dtype == torch.bfloat16:
        return {"rtol": 1.6e-2, "atol": 1e-5 if kind == "ew" else 5e-2}
    if dtype in (torch.float32, torch.complex64):
        if kind == "ew":
            return {"rtol": 1e-5, "atol": 1e-6}
        return {"rtol": 1e-5, "atol": 1e-5}
    if dtype in (torch.float64, torch.complex128):
        return {"rtol": 1e-9, "atol": 1e-12}
    return None


def exp_tensor(r, plus1=False):
    if plus1:
        r = r + 1
    return {"dtype": DT[r.dtype], "shape": list(r.shape), "data": flat(r)}


def err_substr(msg):
    """A 1-based-safe substring of PyTorch's error message."""
    m = str(msg).strip().split("\n")[0]
    # ltensor prefixes "ltensor.op: " itself; PyTorch's "op(): " / "torch.op: " go
    m = re.sub(r"^(torch\.)?\w+(\(\w*\))?\s?: ", "", m).rstrip(".")
    if "INTERNAL ASSERT" in m:  # a PyTorch bug: any deliberate error will do
        return ""
    if m.startswith("ZeroDivisionError"):
        return "division by zero"
    fixed = [
        ("can't be cast to the desired output type", "can't be cast to the desired output type"),
        ("doesn't match the broadcast shape", "doesn't match the broadcast shape"),
        ("Integers to negative integer powers are not allowed", "Integers to negative integer powers are not allowed"),
        ("Dimension out of range", "Dimension out of range"),
        ("refer to a single memory location", "refer to a single memory location"),
        ("must match the size of tensor b", "must match the size of tensor b"),
        ("view size is not compatible", "view size is not compatible with input tensor's size and stride"),
        ("only one dimension can be inferred", "only one dimension can be inferred"),
        ("is invalid for input of size", "is invalid for input of size"),
        ("out of range", "out of range"),
        ("out of bounds", "out of bounds"),
        ("cannot be multiplied", "cannot be multiplied"),
        ("Sizes of tensors must match except in dimension", "Sizes of tensors must match except in dimension"),
        ("stack expects each tensor to be equal size", "stack expects each tensor to be equal size"),
        ("expected a non-empty list of Tensors", "non-empty list of Tensors"),
        ("both arguments to matmul need to be at least 1D", "both arguments to matmul need to be at least 1D"),
        ("inconsistent tensor size", "inconsistent tensor size"),
        ("expected scalar type", "expected scalar type"),
        ("expected mat1 and mat2 to have the same dtype", "same dtype"),
        ("repeated dim", "repeated dim"),
        ("selected index k out of range", "selected index k out of range"),
        ("Negation, the `-` operator, on a bool tensor is not supported", "Negation, the `-` operator, on a bool tensor is not supported"),
        ("Subtraction, the `-` operator, with a bool tensor is not supported", "with a bool tensor is not supported"),
        ("Subtraction, the `-` operator, with two bool tensors is not supported", "with two bool tensors is not supported"),
        ("must match the existing size", "must match"),
        ("expand", "expand"),
        ("Found dtype", ""),  # pow_'s own wording for a failed safe cast
        ("duplicate dims are not allowed", "duplicate dims are not allowed"),
        ("number of dimensions in the tensor input does not match", "number of dim"),
        ("tensors used as indices must be", "tensors used as indices must be"),
        ("number of dims don't match in permute", "number of dims don't match in permute"),
        ("shape mismatch", "shape mismatch"),
        ("must match the existing size", "must match the existing size"),
    ]
    for k, v in fixed:
        if k in m:
            return v
    mm = re.search(r'"\w+" (not implemented for \'\w+\')', m)
    if mm:  # the quoted kernel name is PyTorch-internal
        return mm.group(1)
    # cut at the first digit: numbers in PyTorch's messages are often 0-based dims
    cut = re.split(r"[0-9\[]", m)[0].strip().rstrip(":,(")
    if len(cut) >= 12:
        return cut
    return ""


class Crashed(Exception):
    pass


def torch_run(fn, isolate=False):
    if isolate:
        # PyTorch 1.13 dies with SIGFPE on some integer ops (INT_MIN // -1):
        # run those in a forked child.
        import os
        import pickle
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(rfd)
            try:
                r = (True, fn())
            except Exception as e:  # noqa: BLE001
                r = (False, RuntimeError(str(e)))
            os.write(wfd, pickle.dumps(r))
            os._exit(0)
        os.close(wfd)
        data = b""
        while True:
            chunk = os.read(rfd, 65536)
            if not chunk:
                break
            data += chunk
        os.close(rfd)
        _, status = os.waitpid(pid, 0)
        if not data:
            return False, Crashed("PyTorch crashed (signal %d)" % (status & 0x7f))
        return pickle.loads(data)
    try:
        return True, fn()
    except Exception as e:  # noqa: BLE001 -- PyTorch raises RuntimeError/TypeError/IndexError
        return False, e


NOTE_LOWP = "PyTorch 1.13 CPU lacks this Half/BFloat16 kernel; ltensor computes in float32 and rounds (SPEC §2)"


def add(cat, op, args, fn, call="fn", idx=(), note=None, tol=None, ident=None, lowp=None, chain=None,
        isolate=False, on_crash=None, err=None, cfallback=None, lowp_first=False):
    """Run fn on the torch side (it receives the torch operands) and record a case.
    idx: positions of results holding indices (made 1-based).
    lowp: (fn_upcast) returns the expectation computed in float32 then cast."""
    key = "%s/%s" % (cat, ident or op)
    counters[key] = counters.get(key, 0) + 1
    cid = "%s/%d" % (key, counters[key])
    if lowp is not None and lowp_first:
        okl, resl = torch_run(lowp)
        if okl:
            fn = lowp
            note = (note + "; " if note else "") + "float16/bfloat16 computed in float32 and rounded (SPEC §2)"
    ok, res = torch_run(fn, isolate)
    if not ok and isinstance(res, Crashed):
        ok, res = True, on_crash()
        note = (note + "; " if note else "") + ("PyTorch 1.13 dies with SIGFPE here; ltensor wraps "
                                                "(SPEC §6: integer overflow wraps, never SIGFPE)")
    if not ok and lowp is not None and re.search(r"not implemented for '(Half|BFloat16)'", str(res)):
        ok2, res2 = torch_run(lowp)
        if ok2:
            ok, res = True, res2
            note = (note + "; " if note else "") + NOTE_LOWP
    if not ok and cfallback is not None and re.search(r"not implemented for 'Complex(Float|Double)'", str(res)):
        ok, res = True, cfallback()
        note = (note + "; " if note else "") + ("PyTorch 1.13 CPU lacks this complex kernel; expectation "
                                                "from the defining formula")
    case = {"cat": cat, "id": cid, "op": op, "call": call, "args": args}
    if chain is not None:
        case["chain"] = chain
    if not ok:
        case["expect"] = {"error": err if err is not None else err_substr(res)}
        case["torch_error"] = str(res).strip().split("\n")[0][:200]
    else:
        if isinstance(res, tuple) or "return_types" in type(res).__module__:
            parts = list(res)
            multi = [exp_tensor(p, i in idx) for i, p in enumerate(parts)]
            case["expect"] = {"multi": multi}
            tdt = parts[0].dtype
        elif isinstance(res, torch.Tensor):
            case["expect"] = exp_tensor(res, 0 in idx)
            tdt = res.dtype
        else:
            case["expect"] = {"value": res}
            tdt = None
        t = tol if tol is not None else (tol_for(tdt, "red" if cat in ("reductions", "matmul") else "ew")
                                         if tdt is not None else None)
        if t:
            case["tol"] = t
    if note:
        case["note"] = note
    cases.append(case)
    return case


# ----------------------------------------------------------------- values
FVALS = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.7, -3.7, 0.3, 100.0, -100.0, 1e30, -1e30,
         math.nan, math.inf, -math.inf, 1e-30, 0.9, -0.9, 88.5, -745.5]
IVALS = {
    torch.uint8: [0, 1, 2, 7, 100, 127, 128, 200, 255],
    torch.int8: [0, 1, -1, 2, -7, 100, 127, -128, -3],
    torch.int16: [0, 1, -1, 2, -7, 1000, 32767, -32768, -3],
    torch.int32: [0, 1, -1, 2, -7, 100000, 2**31 - 1, -2**31, -3],
    torch.int64: [0, 1, -1, 2, -7, 10**12, 2**63 - 1, -2**63, -3],
}
CVALS = [0j, 1 + 2j, -1.5 + 0.5j, 3 - 4j, -2j, 0.5 + 0j, -1 + 0j, 2.5 - 3j]


def vals(dt):
    if dt == torch.bool:
        return torch.tensor([True, False, True])
    if dt in INTS:
        return torch.tensor(IVALS[dt], dtype=dt)
    if dt in COMPLEX:
        return torch.tensor(CVALS, dtype=dt)
    return torch.tensor(FVALS, dtype=torch.float64).to(dt)


# ================================================================ UNARY
UNARY = {
    "abs": torch.abs, "neg": torch.neg, "sign": torch.sign, "reciprocal": torch.reciprocal,
    "square": torch.square, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "exp": torch.exp,
    "exp2": torch.exp2, "expm1": torch.expm1, "log": torch.log, "log2": torch.log2,
    "log10": torch.log10, "log1p": torch.log1p, "sin": torch.sin, "cos": torch.cos, "tan": torch.tan,
    "asin": torch.asin, "acos": torch.acos, "atan": torch.atan, "sinh": torch.sinh, "cosh": torch.cosh,
    "tanh": torch.tanh, "sigmoid": torch.sigmoid, "relu": torch.relu,
    "gelu": torch.nn.functional.gelu, "silu": torch.nn.functional.silu, "erf": torch.erf,
    "floor": torch.floor, "ceil": torch.ceil, "round": torch.round, "trunc": torch.trunc,
    "isnan": torch.isnan, "isinf": torch.isinf, "isfinite": torch.isfinite,
    "logical_not": torch.logical_not, "bitwise_not": torch.bitwise_not, "real": torch.real,
    "imag": torch.imag, "conj": lambda x: torch.conj(x).resolve_conj(), "angle": torch.angle,
}
# complex inputs: ltensor's libm and PyTorch's may disagree on branch cuts /
# last bits; finite values keep them comparable within tolerance.


def down(r, dt):
    """float32 results (or tuple members) back to the low-precision dtype dt."""
    if isinstance(r, tuple):
        return tuple(down(x, dt) for x in r)
    if isinstance(r, torch.Tensor) and r.dtype == torch.float32 and dt in LOWP:
        return r.to(dt)
    return r


def lowp_of(fn, *xs):
    ts = [x for x in xs if isinstance(x, torch.Tensor)]
    rt = ts[0].dtype if len(ts) == 1 else torch.result_type(*ts[:2])

    def g():
        up = [x.to(torch.float32) if isinstance(x, torch.Tensor) and x.dtype in LOWP else x for x in xs]
        return down(fn(*up), rt)
    return g


CFORMULA = {"exp2": lambda z: torch.exp(z * math.log(2.0)), "expm1": lambda z: torch.exp(z) - 1,
            "log1p": lambda z: torch.log(1 + z)}


def gen_unary():
    for name, fn in UNARY.items():
        for dt in ALL:
            x = vals(dt)
            add("unary", name, [T(x)], lambda fn=fn, x=x: fn(x), lowp=lowp_of(fn, x) if dt in LOWP else None,
                lowp_first=True,
                cfallback=(lambda x=x, name=name: CFORMULA[name](x)) if name in CFORMULA else None)
        # non-contiguous, zero-dim, empty
        for dt in (torch.float32, torch.int32, torch.float64):
            base = vals(dt)[:8].reshape(2, 4) if dt != torch.int32 else torch.tensor(IVALS[dt][:8], dtype=dt).reshape(2, 4)
            v = [["t"]]
            add("unary", name, [T(base, v)], lambda fn=fn, b=base: fn(apply_view(b, v)), ident=name + "_nc",
                lowp=None)
        for dt in (torch.float32, torch.int64, torch.bool):
            z = torch.tensor(-2.5 if dt == torch.float32 else (True if dt == torch.bool else -3), dtype=dt)
            add("unary", name, [T(z)], lambda fn=fn, z=z: fn(z), ident=name + "_0d")
        e = torch.zeros(0, 3)
        add("unary", name, [T(e)], lambda fn=fn, e=e: fn(e), ident=name + "_empty")
        # expanded input into a method call
        b = torch.tensor([[0.25, -4.0, 9.0]])
        v = [["expand", 2, 3]]
        add("unary", name, [T(b, v)], lambda fn=fn, b=b: fn(apply_view(b, v)), ident=name + "_expanded",
            call="method")
    # gelu approximate="tanh"
    for dt in (torch.float32, torch.float64):
        x = vals(dt)
        add("unary", "gelu", [T(x), OPTS({"approximate": "tanh"})],
            lambda x=x: torch.nn.functional.gelu(x, approximate="tanh"), ident="gelu_tanh")
    # round(decimals) exists in 1.13
    x = torch.tensor([1.2345, -2.5678, 0.125, 1234.5], dtype=torch.float64)
    add("unary", "round", [T(x), OPTS({"decimals": 2})], lambda: torch.round(x, decimals=2), ident="round_decimals")


# ================================================================ BINARY
NOTE_WEAK = "PyTorch's Python API refuses a number here; ltensor takes Lua numbers as weak scalars (SPEC §6)"


def weakcall(fn, a, sv):
    """fn(a, sv) with sv a weak scalar, also where PyTorch's binding wants a Tensor."""
    try:
        return fn(a, sv)
    except TypeError:
        # a weak scalar is a wrapped 0-dim tensor of its natural wide dtype
        rt = torch.result_type(a, sv)
        wide = torch.bool if isinstance(sv, bool) else (torch.int64 if isinstance(sv, int) else torch.float64)
        return fn(a.to(rt) if a.dtype != rt else a, torch.tensor(sv, dtype=wide))


def shift_ref(fn, left, x, s):
    """PyTorch's shift, except for amounts < 0 or >= the bit width, where 1.13
    hits C++ undefined behaviour (results vary by dtype and vector path):
    ltensor defines them as 0 (left) and sign fill (right)."""
    r = fn(x, s)
    st = s if isinstance(s, torch.Tensor) else torch.full_like(r, s)
    bits = torch.iinfo(r.dtype).bits
    bad = (st.to(torch.int64) < 0) | (st.to(torch.int64) >= bits)
    if left:
        fill = torch.zeros_like(r)
    else:
        fill = torch.where(x.to(r.dtype) < 0, torch.full_like(r, -1), torch.zeros_like(r))
    return torch.where(bad, fill, r)


NOTE_SHIFT = "shift amounts < 0 or >= the bit width: C++ UB in PyTorch 1.13; ltensor gives 0 / sign fill"
def layouts(a, b):
    """(name, a_operand, b_operand, a_torch, b_torch) variants of a 3x4 pair."""
    out = [("contig", T(a), T(b), a, b)]
    # transposed: build 4x3 and .t()
    at, bt = a.t().contiguous(), b.t().contiguous()
    out.append(("transposed", T(at, [["t"]]), T(bt, [["t"]]), at.t(), bt.t()))
    # expanded rows / mixed transposed + expanded
    a1 = a[:1].contiguous()
    out.append(("expanded", T(a1, [["expand", 3, 4]]), T(bt, [["t"]]), a1.expand(3, 4), bt.t()))
    # implicit broadcast (3,1) x (4,)
    out.append(("bcast", T(a[:, :1].contiguous()), T(b[0].contiguous()), a[:, :1], b[0]))
    return out


def bvals(dt, nonzero=False, seed=0):
    g = torch.Generator().manual_seed(seed)
    if dt == torch.bool:
        v = torch.randint(0, 2, (3, 4), generator=g).bool()
        return v | True if nonzero else v
    if dt in INTS:
        lo = 0 if dt == torch.uint8 else -9
        v = torch.randint(lo, 10, (3, 4), generator=g).to(dt)
        if nonzero:
            v = torch.where(v == 0, torch.ones_like(v) * 3, v)
        return v
    if dt in COMPLEX:
        return (torch.randint(-8, 9, (3, 4), generator=g) / 4 + 1j * torch.randint(-8, 9, (3, 4), generator=g) / 4).to(dt)
    v = (torch.randint(-16, 17, (3, 4), generator=g).to(torch.float64) / 4)
    if nonzero:
        v = torch.where(v == 0, torch.full_like(v, 1.25), v)
    return v.to(dt)


BIN = {
    "atan2": (torch.atan2, False), "fmod": (torch.fmod, True), "remainder": (torch.remainder, True),
    "floor_divide": (torch.floor_divide, True), "maximum": (torch.maximum, False),
    "minimum": (torch.minimum, False), "logical_and": (torch.logical_and, False),
    "logical_or": (torch.logical_or, False), "logical_xor": (torch.logical_xor, False),
    "bitwise_and": (torch.bitwise_and, False), "bitwise_or": (torch.bitwise_or, False),
    "bitwise_xor": (torch.bitwise_xor, False), "pow": (torch.pow, False),
    "eq": (torch.eq, False), "lt": (torch.lt, False), "ge": (torch.ge, False), "ne": (torch.ne, False),
    "add": (torch.add, False), "sub": (torch.sub, False), "mul": (torch.mul, False),
}
PAIRS = [(d, d) for d in [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
                          torch.float16, torch.bfloat16, torch.float32, torch.float64]] + [
    (torch.int32, torch.float32), (torch.uint8, torch.int8), (torch.int64, torch.float16),
    (torch.bool, torch.int8), (torch.float32, torch.float64), (torch.bfloat16, torch.float16),
    (torch.uint8, torch.bool), (torch.complex64, torch.float64)]


def gen_binary():
    for name, (fn, nz) in BIN.items():
        for (da, db) in PAIRS:
            a = bvals(da, seed=1)
            b = bvals(db, nonzero=nz, seed=2)
            if name == "pow" and db in INTS:
                b = b.abs() if db != torch.uint8 else b % 4
                b = b.clamp(max=4)
            lay = layouts(a, b) if (da, db) in ((torch.int32, torch.int32), (torch.float32, torch.float32),
                                                (torch.int32, torch.float32), (torch.uint8, torch.int8)) \
                else [("contig", T(a), T(b), a, b)]
            for lname, oa, ob, ta, tb in lay:
                add("binary", name, [oa, ob], lambda fn=fn, ta=ta, tb=tb: fn(ta, tb), ident=name + "/" + lname,
                    lowp=lowp_of(fn, ta, tb))
        # scalars on the right (weak), zero-dim, zero-size
        for da in (torch.int32, torch.float32, torch.uint8, torch.bool):
            a = bvals(da, seed=3)
            for sv, op in ((3, I(3)), (-2, I(-2)), (2.5, F(2.5)), (True, B(True))):
                if name.startswith("bitwise") and isinstance(sv, float):
                    continue
                try:
                    fn(a, sv)
                    refused = False
                except TypeError:
                    refused = True
                except RuntimeError:
                    refused = False
                add("binary", name, [T(a), op], lambda fn=fn, a=a, sv=sv: weakcall(fn, a, sv), ident=name + "/scalar",
                    note=NOTE_WEAK if refused else None)
            z = torch.tensor(2, dtype=torch.int64)
            add("binary", name, [T(a), T(z)], lambda fn=fn, a=a, z=z: fn(a, z), ident=name + "/zerodim")
        e = torch.zeros(0, 4)
        f = torch.ones(1, 4)
        add("binary", name, [T(e), T(f)], lambda fn=fn: fn(e, f), ident=name + "/empty")

    # div with rounding modes (incl. int operands and divisor signs)
    for mode in ("trunc", "floor"):
        for (da, db) in PAIRS[:10] + [(torch.int32, torch.float32), (torch.int64, torch.float16)]:
            a, b = bvals(da, seed=4), bvals(db, nonzero=True, seed=5)
            add("binary", "div", [T(a), T(b), OPTS({"rounding_mode": mode})],
                lambda a=a, b=b, mode=mode: torch.div(a, b, rounding_mode=mode), ident="div_" + mode,
                lowp=lambda a=a, b=b, mode=mode: torch.div(a.float() if a.dtype in LOWP else a,
                                                           b.float() if b.dtype in LOWP else b,
                                                           rounding_mode=mode).to(torch.result_type(a, b)))
        x = torch.tensor([7, -7, 7, -7], dtype=torch.int64)
        add("binary", "div", [T(x), I(-2), OPTS({"rounding_mode": mode})],
            lambda x=x, mode=mode: torch.div(x, -2, rounding_mode=mode), ident="div_" + mode + "_scalar")
        x = torch.tensor([7.5, -7.5, math.inf, -0.0, math.nan])
        add("binary", "div", [T(x), F(-2.0), OPTS({"rounding_mode": mode})],
            lambda x=x, mode=mode: torch.div(x, -2.0, rounding_mode=mode), ident="div_" + mode + "_float")

    # pow: integer exponents
    for dt in (torch.int8, torch.int32, torch.int64, torch.uint8):
        x = torch.tensor([-2, -1, 0, 1, 2, 3], dtype=dt) if dt != torch.uint8 else torch.tensor([0, 1, 2, 3], dtype=dt)
        for e in (-1, -2, 0, 3, 2.0, 0.5, -1.0, True, False):
            op = B(e) if isinstance(e, bool) else (I(e) if isinstance(e, int) else F(e))
            add("binary", "pow", [T(x), op], lambda x=x, e=e: torch.pow(x, e), ident="pow_int_scalar")
        ee = torch.tensor([-1, -2, 0, 1, 2, -3], dtype=dt) if dt != torch.uint8 else torch.tensor([0, 1, 2, 3], dtype=dt)
        add("binary", "pow", [T(x), T(ee)], lambda x=x, ee=ee: torch.pow(x, ee), ident="pow_int_tensor")
        add("binary", "pow", [I(2), T(ee)], lambda ee=ee: torch.pow(2, ee), ident="pow_scalar_base")
    for dt in (torch.float32, torch.float64):
        x = torch.tensor([-2.0, -0.0, 0.0, 0.5, math.inf, -math.inf, math.nan, 1.0], dtype=dt)
        for e in (-1, 0, 0.5, -0.5, 2, 3, math.inf, math.nan):
            add("binary", "pow", [T(x), I(e) if isinstance(e, int) else F(e)],
                lambda x=x, e=e: torch.from_numpy(np.power(x.numpy(), np.array(e, dtype=x.numpy().dtype))),
                ident="pow_float_scalar",
                note="C99 pow; PyTorch 1.13 rewrites pow(x, 0.5/-0.5) as (r)sqrt, giving nan at -inf and -inf at -0.0"
                if e in (0.5, -0.5) else None)

    # maximum/minimum with NaN (and fmax-style mixing dtypes)
    for dt in (torch.float32, torch.float64, torch.float16):
        a = torch.tensor([math.nan, 1.0, math.nan, -0.0, 0.0, math.inf], dtype=dt)
        b = torch.tensor([1.0, math.nan, math.nan, 0.0, -0.0, -math.inf], dtype=dt)
        for n, fn in (("maximum", torch.maximum), ("minimum", torch.minimum)):
            add("binary", n, [T(a), T(b)], lambda fn=fn, a=a, b=b: fn(a, b), ident=n + "_nan",
                lowp=lowp_of(fn, a, b))
    a = torch.tensor([1, 5, -3], dtype=torch.int32)
    b = torch.tensor([2.5, math.nan, -3.5])
    add("binary", "maximum", [T(a), T(b)], lambda: torch.maximum(a, b), ident="maximum_mixed")

    # lerp
    for dt in (torch.float32, torch.float64, torch.float16):
        s = torch.tensor([0.0, 1.0, -2.0, 10.0], dtype=dt)
        e = torch.tensor([1.0, -1.0, 2.0, 20.0], dtype=dt)
        for w in (0.25, 0.75, 2.0, -1.0):
            add("binary", "lerp", [T(s), T(e), F(w)], lambda s=s, e=e, w=w: torch.lerp(s, e, w), ident="lerp_scalar",
                lowp=lambda s=s, e=e, w=w: torch.lerp(s.float(), e.float(), w).to(s.dtype))
        w = torch.tensor([0.0, 0.5, 0.9, 1.5], dtype=dt)
        add("binary", "lerp", [T(s), T(e), T(w)], lambda s=s, e=e, w=w: torch.lerp(s, e, w), ident="lerp_tensor",
            lowp=lambda s=s, e=e, w=w: torch.lerp(s.float(), e.float(), w.float()).to(s.dtype))
    s = torch.tensor([1.0, 2.0])
    add("binary", "lerp", [T(s), T(torch.tensor([1.0, 2.0], dtype=torch.float64)), F(0.5)],
        lambda: torch.lerp(s, torch.tensor([1.0, 2.0], dtype=torch.float64), 0.5), ident="lerp_mixed")
    add("binary", "lerp", [T(torch.tensor([1, 2])), T(torch.tensor([3, 4])), F(0.5)],
        lambda: torch.lerp(torch.tensor([1, 2]), torch.tensor([3, 4]), 0.5), ident="lerp_int")
    sb = torch.tensor([[0.0, 1.0, 2.0]])
    add("binary", "lerp", [T(sb, [["expand", 2, 3]]), T(torch.tensor([[1.0], [3.0]])), F(0.5)],
        lambda: torch.lerp(sb.expand(2, 3), torch.tensor([[1.0], [3.0]]), 0.5), ident="lerp_bcast")

    # clamp
    for dt in (torch.float32, torch.int32, torch.uint8, torch.float64, torch.int64):
        x = bvals(dt, seed=6)
        for lo, hi in ((I(-2), I(3)), (F(-1.5), F(2.5)), (NIL(), I(2)), (I(1), NIL()), (I(3), I(-2))):
            def f(x=x, lo=lo, hi=hi):
                return torch.clamp(x, lo.get("value"), hi.get("value"))
            add("binary", "clamp", [T(x), lo, hi], f, ident="clamp_scalar")
        lo_t = bvals(dt, seed=7)
        hi_t = (lo_t + 3).to(dt)
        add("binary", "clamp", [T(x), T(lo_t), T(hi_t)], lambda x=x, a=lo_t, b=hi_t: torch.clamp(x, a, b),
            ident="clamp_tensor")
        add("binary", "clamp", [T(x), T(lo_t[0].contiguous()), NIL()], lambda x=x, a=lo_t: torch.clamp(x, a[0], None),
            ident="clamp_tensor_min")
        add("binary", "clamp", [T(x.t().contiguous(), [["t"]]), NIL(), T(hi_t[:, :1].contiguous())],
            lambda x=x, b=hi_t: torch.clamp(x, None, b[:, :1]), ident="clamp_tensor_max_nc")
    xn = torch.tensor([math.nan, -5.0, 5.0, 0.5])
    add("binary", "clamp", [T(xn), F(-1.0), F(1.0)], lambda: torch.clamp(xn, -1.0, 1.0), ident="clamp_nan")
    add("binary", "clamp", [T(xn), F(math.nan), F(1.0)], lambda: torch.clamp(xn, math.nan, 1.0), ident="clamp_nan")
    xi = torch.tensor([1, 2, 3], dtype=torch.int32)
    add("binary", "clamp", [T(xi), T(torch.tensor([1.5, 1.5, 1.5]))], lambda: torch.clamp(xi, torch.tensor([1.5, 1.5, 1.5])),
        ident="clamp_promote")
    add("binary", "clamp", [T(xi), NIL(), NIL()], lambda: torch.clamp(xi), ident="clamp_none")

    # shifts, including negative and >= bit-width amounts
    for dt in (torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64):
        x = torch.tensor([1, -1, 5, -128, 64, 3, 100, -7, 0], dtype=dt) if dt != torch.uint8 else \
            torch.tensor([1, 255, 5, 128, 64, 3, 100, 7, 0], dtype=dt)
        s = torch.tensor([0, 1, 2, 7, 8, -1, 63, 64, 3], dtype=dt) if dt != torch.uint8 else \
            torch.tensor([0, 1, 2, 7, 8, 255, 63, 64, 3], dtype=dt)
        for n, fn in (("bitwise_left_shift", torch.bitwise_left_shift), ("bitwise_right_shift", torch.bitwise_right_shift)):
            left = n == "bitwise_left_shift"
            add("binary", n, [T(x), T(s)], lambda fn=fn, x=x, s=s, left=left: shift_ref(fn, left, x, s), ident=n,
                note=NOTE_SHIFT)
            for sv in (-1, 1, 3, 40, 70):
                add("binary", n, [T(x), I(sv)], lambda fn=fn, x=x, sv=sv, left=left: shift_ref(fn, left, x, sv),
                    ident=n + "_scalar", note=NOTE_SHIFT if not 0 <= sv < torch.iinfo(x.dtype).bits else None)
        add("binary", "<<", [T(x), I(2)], lambda x=x: x << 2, call="operator", ident="op_shl")
        add("binary", ">>", [T(x), I(1)], lambda x=x: x >> 1, call="operator", ident="op_shr")
    # shift of a bool/float: errors
    add("binary", "bitwise_left_shift", [T(torch.tensor([1.0, 2.0])), I(1)],
        lambda: torch.bitwise_left_shift(torch.tensor([1.0, 2.0]), 1), ident="shift_float")

    # comparisons mixing dtypes (the compare dtype is the promoted one)
    mixes = [(torch.int64, torch.float32, [16777217, 3, -1], [16777216.0, 3.0, -1.5]),
             (torch.uint8, torch.int8, [255, 0, 128], [-1, 0, -128]),
             (torch.int32, torch.bool, [0, 1, 2], [False, True, True]),
             (torch.float16, torch.float32, [0.1, 1.0, 2049.0], [0.1, 1.0, 2049.0]),
             (torch.bfloat16, torch.float64, [0.1, 1.0, 257.0], [0.1, 1.0, 257.0]),
             (torch.int64, torch.float64, [2**53 + 1, 5, 7], [float(2**53), 5.0, 7.5])]
    for da, db, va, vb in mixes:
        a = torch.tensor(va, dtype=da)
        b = torch.tensor(vb, dtype=db)
        for n in ("eq", "ne", "lt", "le", "gt", "ge"):
            add("binary", n, [T(a), T(b)], lambda n=n, a=a, b=b: getattr(torch, n)(a, b), ident="cmp_mixed")
    a = torch.tensor([255, 0, 1], dtype=torch.uint8)
    for sv, op in ((-1, I(-1)), (256, I(256)), (0.5, F(0.5)), (True, B(True))):
        for n in ("eq", "lt", "gt"):
            add("binary", n, [T(a), op], lambda n=n, a=a, sv=sv: getattr(torch, n)(a, sv), ident="cmp_scalar")
    a = torch.tensor([16777217, 1], dtype=torch.int64)
    add("binary", "eq", [T(a), T(torch.tensor(16777216.0))], lambda: torch.eq(a, torch.tensor(16777216.0)),
        ident="cmp_zerodim")


# ================================================================ OVERFLOW / DIV0
def gen_overflow():
    for dt in (torch.int8, torch.int16, torch.int32, torch.uint8, torch.int64):
        info = torch.iinfo(dt)
        x = torch.tensor([info.max, info.min, info.max - 1, 1], dtype=dt)
        y = torch.tensor([1, -1, 3, info.max], dtype=dt) if dt != torch.uint8 else torch.tensor([1, 255, 3, 255], dtype=dt)
        add("overflow", "add", [T(x), T(y)], lambda x=x, y=y: x + y, ident="add")
        add("overflow", "sub", [T(x), T(y)], lambda x=x, y=y: x - y, ident="sub")
        add("overflow", "mul", [T(x), T(y)], lambda x=x, y=y: x * y, ident="mul")
        add("overflow", "neg", [T(x)], lambda x=x: -x, ident="neg")
        add("overflow", "abs", [T(x)], lambda x=x: torch.abs(x), ident="abs")
        add("overflow", "add", [T(x), I(1)], lambda x=x: x + 1, ident="add_scalar")
        add("overflow", "mul", [T(x), I(300)], lambda x=x: x * 300, ident="mul_scalar")
        add("overflow", "add", [T(x), I(2**40)], lambda x=x: x + 2**40, ident="add_big_scalar")
        add("overflow", "square", [T(x)], lambda x=x: torch.square(x), ident="square")
        add("overflow", "sum", [T(x)], lambda x=x: x.sum(), ident="sum")
        add("overflow", "cumsum", [T(x), I(1), DTYPE(dt)], lambda x=x, dt=dt: x.cumsum(0, dtype=dt), ident="cumsum")
        add("overflow", "prod", [T(x), I(1), B(False), OPTS({"dtype": DT[dt]})],
            lambda x=x, dt=dt: x.prod(0, dtype=dt), ident="prod", )
        if dt != torch.uint8:
            mn = torch.tensor([info.min, info.min, 7], dtype=dt)
            neg1 = torch.tensor([-1, 1, -1], dtype=dt)
            wrapped = torch.tensor([info.min, info.min, -7], dtype=dt)
            wrapped_f = torch.tensor([info.min, info.min, -7], dtype=dt)
            zero = torch.zeros(3, dtype=dt)
            add("overflow", "floor_divide", [T(mn), T(neg1)], lambda mn=mn, n=neg1: torch.floor_divide(mn, n),
                ident="min_div_neg1", isolate=True, on_crash=lambda w=wrapped_f: w)
            add("overflow", "div", [T(mn), T(neg1), OPTS({"rounding_mode": "trunc"})],
                lambda mn=mn, n=neg1: torch.div(mn, n, rounding_mode="trunc"), ident="min_div_neg1_trunc",
                isolate=True, on_crash=lambda w=wrapped: w)
            add("overflow", "div", [T(mn), T(neg1), OPTS({"rounding_mode": "floor"})],
                lambda mn=mn, n=neg1: torch.div(mn, n, rounding_mode="floor"), ident="min_div_neg1_floor",
                isolate=True, on_crash=lambda w=wrapped_f: w)
            add("overflow", "remainder", [T(mn), T(neg1)], lambda mn=mn, n=neg1: torch.remainder(mn, n),
                ident="min_rem_neg1", isolate=True, on_crash=lambda z=zero: z)
            add("overflow", "fmod", [T(mn), T(neg1)], lambda mn=mn, n=neg1: torch.fmod(mn, n), ident="min_fmod_neg1",
                isolate=True, on_crash=lambda z=zero: z)
            add("overflow", "//", [T(mn[:1].contiguous()), I(-1)], lambda mn=mn: mn[:1] // -1, call="operator",
                ident="min_idiv_neg1_scalar", isolate=True, on_crash=lambda w=wrapped_f: w[:1])
        # integer division by zero
        a = torch.tensor([5, 0, 3], dtype=dt)
        z = torch.tensor([1, 0, 2], dtype=dt)
        for n, fn, extra in (("floor_divide", torch.floor_divide, []), ("remainder", torch.remainder, []),
                             ("fmod", torch.fmod, []),
                             ("div", lambda p, q: torch.div(p, q, rounding_mode="trunc"), [OPTS({"rounding_mode": "trunc"})]),
                             ("div", lambda p, q: torch.div(p, q, rounding_mode="floor"), [OPTS({"rounding_mode": "floor"})])):
            add("div0", n, [T(a), T(z)] + extra, lambda fn=fn, a=a, z=z: fn(a, z), ident=n + "_int")
        add("div0", "remainder", [T(a), I(0)], lambda a=a: torch.remainder(a, 0), ident="remainder_int_scalar")
        add("div0", "//", [T(a), I(0)], lambda a=a: a // 0, call="operator", ident="op_idiv_int")
        add("div0", "%", [T(a), I(0)], lambda a=a: a % 0, call="operator", ident="op_mod_int")
        add("div0", "div", [T(a), T(z)], lambda a=a, z=z: torch.div(a, z), ident="truediv_int")
    for dt in (torch.float32, torch.float64, torch.float16):
        a = torch.tensor([1.0, -1.0, 0.0, math.nan, math.inf, -3.5], dtype=dt)
        z = torch.tensor([0.0, 0.0, 0.0, 0.0, 0.0, -0.0], dtype=dt)
        for n, fn, extra in (("div", torch.div, []), ("floor_divide", torch.floor_divide, []),
                             ("remainder", torch.remainder, []), ("fmod", torch.fmod, []),
                             ("div", lambda p, q: torch.div(p, q, rounding_mode="trunc"), [OPTS({"rounding_mode": "trunc"})]),
                             ("div", lambda p, q: torch.div(p, q, rounding_mode="floor"), [OPTS({"rounding_mode": "floor"})])):
            add("div0", n, [T(a), T(z)] + extra, lambda fn=fn, a=a, z=z: fn(a, z), ident=n + "_float",
                lowp=lambda fn=fn, a=a, z=z: fn(a.float(), z.float()).to(a.dtype))
        add("div0", "/", [T(a), I(0)], lambda a=a: a / 0, call="operator", ident="op_div_float")
        add("div0", "%", [T(a), F(0.0)], lambda a=a: a % 0.0, call="operator", ident="op_mod_float")
        add("div0", "//", [T(a), F(-0.0)], lambda a=a: a // -0.0, call="operator", ident="op_idiv_float")
    # float remainder/floor_divide sign conventions
    a = torch.tensor([5.5, -5.5, 5.5, -5.5, 1e300, -0.0], dtype=torch.float64)
    b = torch.tensor([2.0, 2.0, -2.0, -2.0, 3.0, 5.0], dtype=torch.float64)
    for n in ("remainder", "fmod", "floor_divide"):
        add("div0", n, [T(a), T(b)], lambda n=n: getattr(torch, n)(a, b), ident=n + "_signs")


# ================================================================ REDUCTIONS
def gen_reductions():
    g = torch.Generator().manual_seed(11)

    def base(dt, shape=(3, 4, 5)):
        if dt == torch.bool:
            return torch.randint(0, 2, shape, generator=g).bool()
        if dt in INTS:
            lo = 0 if dt == torch.uint8 else -5
            return torch.randint(lo, 6, shape, generator=g).to(dt)
        if dt in COMPLEX:
            return (torch.randint(-8, 9, shape, generator=g) / 4 + 1j * torch.randint(-8, 9, shape, generator=g) / 4).to(dt)
        return (torch.randint(-40, 41, shape, generator=g).to(torch.float64) / 8).to(dt)

    perm = [["permute", 3, 1, 2]]  # (3,4,5) stored as (4,5,3)? build (4,5,3) then permute(3,1,2) -> (3,4,5)

    def nc(x):
        """operand for x as a non-contiguous permuted view, and the torch view."""
        st = x.permute(1, 2, 0).contiguous()          # (4,5,3)
        return T(st, perm), st.permute(2, 0, 1)

    dimsets = [None, 0, -1, (0, 2), (1,), (), (-1, 0)]
    red = {
        "sum": lambda x, d, k: x.sum() if d is None else x.sum(d, keepdim=k),
        "mean": lambda x, d, k: x.mean() if d is None else x.mean(d, keepdim=k),
        "amax": lambda x, d, k: x.amax() if d is None else x.amax(d, keepdim=k),
        "amin": lambda x, d, k: x.amin() if d is None else x.amin(d, keepdim=k),
        "all": lambda x, d, k: _nz(x).all() if d is None else _allany(torch.all, x, d, k),
        "any": lambda x, d, k: _nz(x).any() if d is None else _allany(torch.any, x, d, k),
        "std": lambda x, d, k: x.std() if d is None else x.std(d, keepdim=k),
        "var": lambda x, d, k: x.var() if d is None else x.var(d, keepdim=k),
        # dim=() means every dim (PyTorch 1.13's logsumexp mis-shapes its output there: a bug)
        "logsumexp": lambda x, d, k: torch.logsumexp(x, d if d not in (None, ()) else tuple(range(x.dim())), keepdim=k),
        "norm": lambda x, d, k: torch.norm(x) if d is None else torch.norm(x, dim=d, keepdim=k),
        # (ltensor's norm takes p first: the generator passes nil for it)
    }

    def ltdims(d):
        if d is None:
            return []
        if isinstance(d, tuple):
            return [LIST([dim1(i) for i in d])]
        return [I(dim1(d))]

    for name, fn in red.items():
        dts = [torch.bool, torch.uint8, torch.int32, torch.int64, torch.float16, torch.bfloat16, torch.float32,
               torch.float64, torch.complex64]
        for dt in dts:
            x = base(dt)
            op, tx = nc(x)
            for d in dimsets:
                if name in ("all", "any") and isinstance(d, tuple):
                    continue  # 1.13 has no dim lists for all/any
                if name == "logsumexp" and d is None:
                    continue
                for k in ((False, True) if d is not None else (False,)):
                    args = [op] + ([NIL()] if name == "norm" and d is not None else []) + ltdims(d) + \
                        ([B(k)] if d is not None else [])
                    add("reductions", name, args, lambda fn=fn, tx=tx, d=d, k=k: fn(tx, d, k),
                        lowp=(lambda fn=fn, tx=tx, d=d, k=k: down(fn(tx.float(), d, k), tx.dtype)) if dt in LOWP else None)
    # prod / max / min / argmax / argmin take one dim
    for dt in (torch.bool, torch.uint8, torch.int32, torch.int64, torch.float16, torch.float32, torch.float64):
        x = base(dt)
        op, tx = nc(x)
        for d in (None, 0, 2, -2):
            for k in ((False, True) if d is not None else (False,)):
                da = ([I(dim1(d)), B(k)] if d is not None else [])
                add("reductions", "prod", [op] + da, lambda tx=tx, d=d, k=k: tx.prod() if d is None else tx.prod(d, keepdim=k),
                    lowp=lambda tx=tx, d=d, k=k: down(tx.float().prod() if d is None else tx.float().prod(d, keepdim=k), tx.dtype))
                for n in ("max", "min"):
                    add("reductions", n, [op] + da,
                        lambda n=n, tx=tx, d=d, k=k: getattr(tx, n)() if d is None else tuple(getattr(tx, n)(d, keepdim=k)),
                        idx=(1,))
                for n in ("argmax", "argmin"):
                    add("reductions", n, [op] + da,
                        lambda n=n, tx=tx, d=d, k=k: getattr(tx, n)() if d is None else getattr(tx, n)(d, keepdim=k),
                        idx=(0,))
    # NaN handling and ties in max/argmax
    xn = torch.tensor([[1.0, math.nan, 3.0], [2.0, 2.0, -1.0], [math.inf, 5.0, math.nan]])
    for n in ("max", "min"):
        add("reductions", n, [T(xn), I(2)], lambda n=n: tuple(getattr(xn, n)(1)), idx=(1,), ident=n + "_nan")
        add("reductions", n, [T(xn)], lambda n=n: getattr(xn, n)(), ident=n + "_nan")
    for n in ("argmax", "argmin", "amax", "amin", "sum", "mean", "logsumexp", "softmax"):
        add("reductions", n, [T(xn), I(1)], lambda n=n: getattr(torch, n)(xn, 0), idx=(0,) if n.startswith("arg") else (),
            ident=n + "_nan")
    xt = torch.tensor([[3, 1, 3, 1], [2, 2, 2, 2]], dtype=torch.int32)
    for n in ("max", "min"):
        add("reductions", n, [T(xt), I(2)], lambda n=n: tuple(getattr(xt, n)(1)), idx=(1,), ident=n + "_ties")
    for n in ("argmax", "argmin"):
        add("reductions", n, [T(xt), I(-1)], lambda n=n: getattr(xt, n)(-1), idx=(0,), ident=n + "_ties")
        add("reductions", n, [T(xt)], lambda n=n: getattr(xt, n)(), idx=(0,), ident=n + "_ties")
    # std/var corrections
    x = base(torch.float64)
    op, tx = nc(x)
    for n in ("std", "var"):
        for corr in (0, 1, 2, 5, 60):
            for d in (None, 1, (0, 2)):
                args = [op] + ltdims(d) + ([B(True)] if d is not None else []) + [OPTS({"correction": corr})]
                add("reductions", n, args,
                    lambda n=n, corr=corr, d=d: getattr(torch, n)(tx, dim=d, correction=corr, keepdim=d is not None),
                    ident=n + "_correction")
        for unb in (True, False):
            add("reductions", n, [op, B(unb)], lambda n=n, unb=unb: getattr(torch, n)(tx, unb), ident=n + "_unbiased")
        one = torch.tensor([2.5])
        add("reductions", n, [T(one)], lambda n=n: getattr(torch, n)(one), ident=n + "_single")
        add("reductions", n, [T(torch.tensor(3.0))], lambda n=n: getattr(torch, n)(torch.tensor(3.0)), ident=n + "_0d")
        xc = base(torch.complex128)
        add("reductions", n, [T(xc), I(2)], lambda n=n, xc=xc: getattr(torch, n)(xc, 1), ident=n + "_complex")
    # norm p variants
    xv = torch.tensor([[3.0, -4.0, 0.0], [1.0, -2.0, 0.5]], dtype=torch.float64)
    for p in (1, 2, 3, 0, 0.5, math.inf, -math.inf, -1, "fro"):
        pop = {"kind": "list", "value": ("inf" if p == math.inf else "-inf" if p == -math.inf else p)} \
            if isinstance(p, str) or p in (math.inf, -math.inf) else (I(p) if isinstance(p, int) else F(p))
        add("reductions", "norm", [T(xv), pop], lambda p=p: torch.norm(xv, p), ident="norm_p")
        if p != "fro":
            add("reductions", "norm", [T(xv), pop, I(2), B(True)], lambda p=p: torch.norm(xv, p, dim=1, keepdim=True),
                ident="norm_p_dim")
    xc = torch.tensor([3 + 4j, 1 - 1j], dtype=torch.complex64)
    add("reductions", "norm", [T(xc)], lambda: torch.norm(xc), ident="norm_complex")
    add("reductions", "norm", [T(torch.tensor([1, 2]))], lambda: torch.norm(torch.tensor([1, 2])), ident="norm_int")
    # cumsum/cumprod dtypes
    for dt in (torch.bool, torch.uint8, torch.int8, torch.int32, torch.int64, torch.float16, torch.float32,
               torch.float64, torch.complex64):
        x = base(dt, (3, 4))
        xt = x.t().contiguous()
        for n in ("cumsum", "cumprod"):
            for d in (0, -1):
                add("reductions", n, [T(xt, [["t"]]), I(dim1(d))], lambda n=n, xt=xt, d=d: getattr(xt.t(), n)(d),
                    lowp=(lambda n=n, xt=xt, d=d: getattr(xt.t().float(), n)(d).to(xt.dtype)) if dt in LOWP else None)
            for od in (torch.float64, torch.int32):
                add("reductions", n, [T(x), I(2), OPTS({"dtype": DT[od]})],
                    lambda n=n, x=x, od=od: getattr(x, n)(1, dtype=od), ident=n + "_dtype")
        add("reductions", "cumsum", [T(torch.zeros(0, 3, dtype=dt)), I(1)],
            lambda dt=dt: torch.zeros(0, 3, dtype=dt).cumsum(0), ident="cumsum_empty")
    add("reductions", "cumsum", [T(torch.tensor(5)), I(1)], lambda: torch.tensor(5).cumsum(0), ident="cumsum_0d")
    add("reductions", "cumsum", [T(torch.ones(3)), I(2)], lambda: torch.ones(3).cumsum(1), ident="cumsum_baddim")
    # softmax / log_softmax
    for dt in (torch.float32, torch.float64, torch.int64):
        x = base(dt, (3, 4))
        for n in ("softmax", "log_softmax"):
            for d in (0, 1, -1):
                add("reductions", n, [T(x.t().contiguous(), [["t"]]), I(dim1(d))],
                    lambda n=n, x=x, d=d: getattr(torch, n)(x if x.is_floating_point() else x.float(), d),
                    note=None if x.is_floating_point() else
                    "integral input gives the default dtype in ltensor (float-valued op, SPEC §3); PyTorch 1.13 raises")
    big = torch.tensor([[1000.0, 1000.0, -1000.0], [-math.inf, 0.0, -math.inf], [-math.inf] * 3])
    for n in ("softmax", "log_softmax", "logsumexp"):
        add("reductions", n, [T(big), I(2)], lambda n=n: getattr(torch, n)(big, 1), ident=n + "_extreme")
    # sort / argsort / topk
    for dt in (torch.float32, torch.float64, torch.int32, torch.uint8, torch.int64, torch.bool, torch.float16):
        if dt == torch.bool:
            x = torch.tensor([[True, False, True, False], [False, False, True, True]])
        elif dt in INTS:
            x = torch.tensor([[5, 1, 9, 3], [2, 8, 0, 7]], dtype=dt)
        else:
            x = torch.tensor([[0.5, math.nan, -1.0, math.inf], [2.0, -math.inf, 0.0, -0.5]], dtype=dt)
        xt = x.t().contiguous()
        for d in (0, -1):
            for desc in (False, True):
                args = [T(xt, [["t"]]), I(dim1(d)), B(desc)]
                add("reductions", "sort", args, lambda xt=xt, d=d, desc=desc: tuple(torch.sort(xt.t(), d, desc)),
                    idx=(1,), lowp=(lambda xt=xt, d=d, desc=desc: tuple(r if i else r.to(xt.dtype) for i, r in enumerate(torch.sort(xt.t().float(), d, desc)))) if dt in LOWP else None)
                add("reductions", "argsort", args, lambda xt=xt, d=d, desc=desc: torch.argsort(xt.t(), d, desc),
                    idx=(0,), lowp=(lambda xt=xt, d=d, desc=desc: torch.argsort(xt.t().float(), d, desc)) if dt in LOWP else None)
        for k in (0, 1, 2, 4, 5):
            for largest in (True, False):
                add("reductions", "topk", [T(x), I(k), I(-1), B(largest)],
                    lambda x=x, k=k, largest=largest: tuple(torch.topk(x, k, -1, largest)), idx=(1,),
                    lowp=(lambda x=x, k=k, largest=largest: tuple(r if i else r.to(x.dtype) for i, r in enumerate(torch.topk(x.float(), k, -1, largest)))) if dt in LOWP else None)
        add("reductions", "topk", [T(x), I(1), I(1)], lambda x=x: tuple(torch.topk(x, 1, 0)), idx=(1,),
            ident="topk_dim", lowp=(lambda x=x: tuple(r if i else r.to(x.dtype) for i, r in enumerate(torch.topk(x.float(), 1, 0)))) if dt in LOWP else None)
    # stable sort with duplicates: PyTorch's CPU sort is stable in 1.13
    xd = torch.tensor([3, 1, 3, 1, 2, 3, 1], dtype=torch.int64)
    add("reductions", "sort", [T(xd)], lambda: tuple(torch.sort(xd, stable=True)), idx=(1,), ident="sort_stable",
        note="equal keys keep their order (PyTorch's stable CPU sort)")
    add("reductions", "sort", [T(torch.tensor(2.5))], lambda: tuple(torch.sort(torch.tensor(2.5))), idx=(1,), ident="sort_0d")
    add("reductions", "sort", [T(torch.zeros(0))], lambda: tuple(torch.sort(torch.zeros(0))), idx=(1,), ident="sort_empty")
    # zero-size reductions
    e = torch.zeros(0, 3)
    for n in ("sum", "mean", "prod", "amax", "max", "argmax", "all", "any", "std", "logsumexp", "norm"):
        if n == "logsumexp":  # ltensor's dim is optional (SPEC §6): all dims
            add("reductions", n, [T(e)], lambda: torch.logsumexp(e, (0, 1)), ident=n + "_empty",
                note="ltensor's dim is optional (SPEC §6); PyTorch requires it")
        else:
            add("reductions", n, [T(e)], lambda n=n: getattr(torch, n)(e), ident=n + "_empty")
        add("reductions", n, [T(e), I(1)],
            lambda n=n: (tuple(getattr(torch, n)(e, 0)) if n == "max" else getattr(torch, n)(e, 0)),
            idx=(1,) if n == "max" else ((0,) if n == "argmax" else ()), ident=n + "_empty_dim")
        add("reductions", n, [T(e), I(2)],
            lambda n=n: (tuple(getattr(torch, n)(e, 1)) if n == "max" else getattr(torch, n)(e, 1)),
            idx=(1,) if n == "max" else ((0,) if n == "argmax" else ()), ident=n + "_empty_dim")
    # sum/mean with dtype option, bool/int mean errors, dim errors
    x = base(torch.int32, (2, 3))
    add("reductions", "sum", [T(x), I(1), B(False), OPTS({"dtype": "float64"})], lambda: x.sum(0, dtype=torch.float64),
        ident="sum_dtype")
    add("reductions", "mean", [T(x), OPTS({"dtype": "float64"})], lambda: x.mean(dtype=torch.float64), ident="mean_dtype")
    add("reductions", "sum", [T(x), I(3)], lambda: x.sum(2), ident="sum_baddim")
    add("reductions", "sum", [T(x), LIST([1, 1])], lambda: x.sum((0, 0)), ident="sum_dupdim")
    add("reductions", "sum", [T(torch.tensor(4.0)), I(1)], lambda: torch.tensor(4.0).sum(0), ident="sum_0d_dim")
    add("reductions", "sum", [T(torch.tensor(4.0)), I(-1), B(True)], lambda: torch.tensor(4.0).sum(-1, keepdim=True),
        ident="sum_0d_dim")
    add("reductions", "amax", [T(torch.tensor(4)), I(1)], lambda: torch.tensor(4).amax(0), ident="amax_0d_dim")
    ex = torch.ones(2, 1).expand(2, 3)
    add("reductions", "sum", [T(torch.ones(2, 1), [["expand", 2, 3]]), I(2)], lambda: ex.sum(1), ident="sum_expanded")
    add("reductions", "prod", [T(torch.tensor([2.0, 0.5]), [["expand", 3, 2]]), I(1)],
        lambda: torch.tensor([2.0, 0.5]).expand(3, 2).prod(0), ident="prod_expanded")


def _allany(f, x, d, k):
    return f(_nz(x), d, keepdim=k)


def _nz(x):
    """PyTorch 1.13's all/any on complex input drop the imaginary part (a bug:
    all(1j) is False); ltensor tests both parts, so complex is compared != 0."""
    return (x != 0) if x.dtype.is_complex else x


# ================================================================ IN-PLACE
def gen_inplace():
    combos = [(torch.int32, torch.float32), (torch.int64, torch.float64), (torch.float32, torch.int64),
              (torch.bool, torch.int8), (torch.uint8, torch.int64), (torch.float16, torch.float64),
              (torch.int32, torch.bool), (torch.float32, torch.complex64), (torch.int8, torch.int64)]
    for n in ("add_", "sub_", "mul_", "div_", "pow_", "remainder_", "fmod_", "clamp_", "bitwise_and_"):
        for da, db in combos:
            a = bvals(da, nonzero=True, seed=8)
            b = bvals(db, nonzero=True, seed=9)
            if n == "pow_":
                b = b.abs() if db not in (torch.bool, torch.complex64) else b
            if n == "clamp_":
                fn = lambda a=a, b=b: a.clone().clamp_(b)  # noqa: E731
            else:
                fn = lambda a=a, b=b, n=n: getattr(a.clone(), n)(b)  # noqa: E731
            add("inplace", n, [T(a), T(b)], fn, call="method")
        for da in (torch.int32, torch.uint8, torch.bool, torch.float16):
            a = bvals(da, nonzero=True, seed=10)
            for sv, op in ((2, I(2)), (1.5, F(1.5)), (True, B(True))):
                if n == "bitwise_and_" and isinstance(sv, float):
                    continue
                if n == "clamp_":
                    fn = lambda a=a, sv=sv: a.clone().clamp_(sv)  # noqa: E731
                else:
                    fn = lambda a=a, sv=sv, n=n: getattr(a.clone(), n)(sv)  # noqa: E731
                add("inplace", n, [T(a), op], fn, call="method", ident=n + "_scalar",
                    lowp=(lambda a=a, sv=sv, n=n: (getattr(a.clone().float(), n)(sv) if n != "clamp_" else a.clone().float().clamp_(sv)).to(a.dtype)) if da in LOWP else None)
    # broadcasting into a smaller destination; into a transposed destination; expanded destination
    a = torch.ones(3)
    b = torch.ones(2, 3)
    for n in ("add_", "mul_", "sub_"):
        add("inplace", n, [T(a), T(b)], lambda n=n: getattr(a.clone(), n)(b), call="method", ident="bcast_dest")
    a2 = torch.arange(6.0).reshape(3, 2)
    add("inplace", "add_", [T(a2, [["t"]]), T(torch.tensor([10.0, 20.0, 30.0]))],
        lambda: a2.clone().t().add_(torch.tensor([10.0, 20.0, 30.0])), call="method", ident="transposed_dest")
    add("inplace", "add_", [T(torch.ones(1, 3), [["expand", 2, 3]]), T(torch.ones(2, 3))],
        lambda: torch.ones(1, 3).expand(2, 3).add_(torch.ones(2, 3)), call="method", ident="expanded_dest")
    add("inplace", "add_", [T(torch.ones(2, 3)), T(torch.ones(3)), I(2)],
        lambda: torch.ones(2, 3).add_(torch.ones(3), alpha=2), call="method", ident="alpha")
    add("inplace", "add_", [T(torch.ones(2, 3, dtype=torch.int32)), T(torch.ones(3, dtype=torch.int32)), F(2.5)],
        lambda: torch.ones(2, 3, dtype=torch.int32).add_(torch.ones(3, dtype=torch.int32), alpha=2.5),
        call="method", ident="alpha_float_on_int")
    add("inplace", "add_", [T(torch.tensor(1.0)), T(torch.ones(2))], lambda: torch.tensor(1.0).add_(torch.ones(2)),
        call="method", ident="bcast_dest_0d")
    for n in ("neg_", "abs_", "sqrt_", "exp_", "floor_", "sigmoid_", "relu_", "clamp_min_"):
        for da in (torch.int32, torch.float32, torch.bool):
            a = bvals(da, seed=12)
            args = [T(a)] + ([I(0)] if n == "clamp_min_" else [])
            fn = (lambda a=a, n=n: getattr(a.clone(), n)(0)) if n == "clamp_min_" else (lambda a=a, n=n: getattr(a.clone(), n)())
            add("inplace", n, args, fn, call="method", ident=n + "_unary")


# ================================================================ VIEWS
def gen_views():
    x = torch.arange(24).reshape(2, 3, 4)
    xt = x.permute(2, 0, 1).contiguous()            # (4,2,3), made (2,3,4) by permute(2,3,1)
    NC = [["permute", 2, 3, 1]]
    xnc = xt.permute(1, 2, 0)

    def chain(steps, torch_fn, base=x, bview=None, tbase=None, ident=None, note=None):
        add("views", "chain", [T(base, bview)], lambda: torch_fn(tbase if tbase is not None else base),
            call="chain", chain=steps, ident=ident or steps[0][0], note=note)

    for b, bv, tb in ((x, None, x), (xt, NC, xnc)):
        tag = "" if bv is None else "_nc"
        chain([["unsqueeze", 1]], lambda t: t.unsqueeze(0), b, bv, tb, "unsqueeze" + tag)
        chain([["unsqueeze", -1]], lambda t: t.unsqueeze(-1), b, bv, tb, "unsqueeze" + tag)
        chain([["unsqueeze", 4]], lambda t: t.unsqueeze(3), b, bv, tb, "unsqueeze" + tag)
        chain([["unsqueeze", -4]], lambda t: t.unsqueeze(-4), b, bv, tb, "unsqueeze" + tag)
        chain([["unsqueeze", 5]], lambda t: t.unsqueeze(4), b, bv, tb, "unsqueeze" + tag)
        chain([["flatten"]], lambda t: t.flatten(), b, bv, tb, "flatten" + tag)
        chain([["flatten", 2]], lambda t: t.flatten(1), b, bv, tb, "flatten" + tag)
        chain([["flatten", 1, 2]], lambda t: t.flatten(0, 1), b, bv, tb, "flatten" + tag)
        chain([["flatten", -2, -1]], lambda t: t.flatten(-2, -1), b, bv, tb, "flatten" + tag)
        chain([["flatten", 3, 2]], lambda t: t.flatten(2, 1), b, bv, tb, "flatten" + tag)
        chain([["permute", 3, 1, 2]], lambda t: t.permute(2, 0, 1), b, bv, tb, "permute" + tag)
        chain([["permute", -1, -2, -3]], lambda t: t.permute(-1, -2, -3), b, bv, tb, "permute" + tag)
        chain([["permute", 1, 1, 2]], lambda t: t.permute(0, 0, 1), b, bv, tb, "permute" + tag)
        chain([["permute", 1, 2]], lambda t: t.permute(0, 1), b, bv, tb, "permute" + tag)
        chain([["reshape", 4, 6]], lambda t: t.reshape(4, 6), b, bv, tb, "reshape" + tag)
        chain([["reshape", -1]], lambda t: t.reshape(-1), b, bv, tb, "reshape" + tag)
        chain([["reshape", 3, -1, 2]], lambda t: t.reshape(3, -1, 2), b, bv, tb, "reshape" + tag)
        chain([["reshape", -1, -1]], lambda t: t.reshape(-1, -1), b, bv, tb, "reshape" + tag)
        chain([["reshape", 5, 5]], lambda t: t.reshape(5, 5), b, bv, tb, "reshape" + tag)
        chain([["view", 6, 4]], lambda t: t.view(6, 4), b, bv, tb, "view" + tag)
        chain([["view", -1]], lambda t: t.view(-1), b, bv, tb, "view" + tag)
        chain([["view", 2, 12]], lambda t: t.view(2, 12), b, bv, tb, "view" + tag)
        chain([["view", 2, 3, 2, 2]], lambda t: t.view(2, 3, 2, 2), b, bv, tb, "view" + tag)
        chain([["view", 7, -1]], lambda t: t.view(7, -1), b, bv, tb, "view" + tag)
        chain([["narrow", 3, -2, 2]], lambda t: t.narrow(2, -2, 2), b, bv, tb, "narrow" + tag)
        chain([["narrow", -1, 2, 3]], lambda t: t.narrow(-1, 1, 3), b, bv, tb, "narrow" + tag)
        chain([["narrow", 2, 3, 1]], lambda t: t.narrow(1, 2, 1), b, bv, tb, "narrow" + tag)
        chain([["narrow", 2, 3, 2]], lambda t: t.narrow(1, 2, 2), b, bv, tb, "narrow" + tag)
        chain([["narrow", 2, 4, 0]], lambda t: t.narrow(1, 3, 0), b, bv, tb, "narrow" + tag,
              note="start == size with length 0 is allowed")
        chain([["select", 3, -1]], lambda t: t.select(2, -1), b, bv, tb, "select" + tag)
        chain([["select", 1, 2]], lambda t: t.select(0, 1), b, bv, tb, "select" + tag)
        chain([["select", -2, -3]], lambda t: t.select(-2, -3), b, bv, tb, "select" + tag)
        chain([["select", 2, 4]], lambda t: t.select(1, 3), b, bv, tb, "select" + tag)
        chain([["select", 2, -4]], lambda t: t.select(1, -4), b, bv, tb, "select" + tag)
        chain([["transpose", 1, -1]], lambda t: t.transpose(0, -1), b, bv, tb, "transpose" + tag)
        chain([["transpose", 1, -1], ["contiguous"], ["view", -1]], lambda t: t.transpose(0, -1).contiguous().view(-1),
              b, bv, tb, "transpose" + tag)
        chain([["transpose", 1, 4]], lambda t: t.transpose(0, 3), b, bv, tb, "transpose" + tag)
        chain([["t"]], lambda t: t.t(), b, bv, tb, "t" + tag)
        chain([["squeeze"]], lambda t: t.squeeze(), b, bv, tb, "squeeze" + tag)
        chain([["unsqueeze", 2], ["squeeze", 2]], lambda t: t.unsqueeze(1).squeeze(1), b, bv, tb, "squeeze" + tag)
        chain([["squeeze", 1]], lambda t: t.squeeze(0), b, bv, tb, "squeeze" + tag)
        chain([["squeeze", 4]], lambda t: t.squeeze(3), b, bv, tb, "squeeze" + tag)
        chain([["select", 1, 1], ["expand", 2, 3, 4]], lambda t: t.select(0, 0).expand(2, 3, 4), b, bv, tb, "expand" + tag)
        chain([["expand", 2, 3, 5]], lambda t: t.expand(2, 3, 5), b, bv, tb, "expand" + tag)
        chain([["expand", 3, 4]], lambda t: t.expand(3, 4), b, bv, tb, "expand" + tag)
        chain([["expand", -1, -1, 4]], lambda t: t.expand(-1, -1, 4), b, bv, tb, "expand" + tag)
    # zero-dim and size-1 edge cases
    z = torch.tensor(7.5)
    for steps, fn in (([["unsqueeze", 1]], lambda t: t.unsqueeze(0)), ([["unsqueeze", -1]], lambda t: t.unsqueeze(-1)),
                      ([["unsqueeze", 2]], lambda t: t.unsqueeze(1)), ([["flatten"]], lambda t: t.flatten()),
                      ([["squeeze"]], lambda t: t.squeeze()), ([["squeeze", 1]], lambda t: t.squeeze(0)),
                      ([["squeeze", -1]], lambda t: t.squeeze(-1)), ([["view", 1, 1]], lambda t: t.view(1, 1)),
                      ([["reshape", -1]], lambda t: t.reshape(-1)), ([["expand", 2, 2]], lambda t: t.expand(2, 2)),
                      ([["t"]], lambda t: t.t()), ([["permute"]], lambda t: t.permute(())),
                      ([["transpose", 1, -1]], lambda t: t.transpose(0, -1)),
                      ([["select", 1, 1]], lambda t: t.select(0, 0))):
        add("views", "chain", [{"kind": "tensor", "dtype": "float32", "shape": [], "data": [7.5]}], lambda fn=fn: fn(z),
            call="chain", chain=steps, ident="zerodim_" + steps[0][0])
    e = torch.zeros(0, 3)
    for steps, fn in (([["view", -1]], lambda t: t.view(-1)), ([["reshape", 3, -1]], lambda t: t.reshape(3, -1)),
                      ([["view", 0, -1]], lambda t: t.view(0, -1)), ([["t"]], lambda t: t.t()),
                      ([["flatten"]], lambda t: t.flatten()), ([["unsqueeze", 2]], lambda t: t.unsqueeze(1)),
                      ([["narrow", 2, 2, 2]], lambda t: t.narrow(1, 1, 2)), ([["expand", 2, 0, 3]], lambda t: t.expand(2, 0, 3))):
        add("views", "chain", [T(e)], lambda fn=fn: fn(e), call="chain", chain=steps, ident="empty_" + steps[0][0])
    # view of a transposed tensor: only some shapes need a copy
    m = torch.arange(12.0).reshape(4, 3)
    mt = m.t()
    for steps, fn in (([["view", 12]], lambda t: t.view(12)), ([["view", 3, 2, 2]], lambda t: t.view(3, 2, 2)),
                      ([["unsqueeze", 2], ["view", 3, 4]], lambda t: t.unsqueeze(1).view(3, 4)),
                      ([["reshape", 12]], lambda t: t.reshape(12)), ([["reshape", 2, 6]], lambda t: t.reshape(2, 6)),
                      ([["contiguous"], ["view", 12]], lambda t: t.contiguous().view(12)),
                      ([["is_contiguous"]], lambda t: t.is_contiguous()),
                      ([["flatten"]], lambda t: t.flatten())):
        add("views", "chain", [T(m, [["t"]])], lambda fn=fn: fn(mt), call="chain", chain=steps,
            ident="transposed_" + steps[-1][0])
    # narrow/select out of range, expand errors
    add("views", "chain", [T(m)], lambda: m.narrow(0, -5, 1), call="chain", chain=[["narrow", 1, -5, 1]],
        ident="err_narrow", err="out of range", note="PyTorch words a bad start as 'Dimension out of range'")
    for steps, fn in (([["narrow", 1, 3, 3]], lambda t: t.narrow(0, 2, 3)),
                      ([["select", 1, 5]], lambda t: t.select(0, 4)), ([["select", 1, -5]], lambda t: t.select(0, -5)),
                      ([["select", 3, 1]], lambda t: t.select(2, 0)), ([["expand", 4]], lambda t: t.expand(4)),
                      ([["expand", 3, 4]], lambda t: t.expand(3, 4)), ([["narrow", 1, 1, -1]], lambda t: t.narrow(0, 0, -1))):
        add("views", "chain", [T(m)], lambda fn=fn: fn(m), call="chain", chain=steps, ident="err_" + steps[0][0])

    # cat / stack with promotion and empties
    def SEQ(*ops):
        return {"kind": "seq", "value": list(ops)}
    pairs = [(torch.int32, torch.float32), (torch.bool, torch.uint8), (torch.int8, torch.uint8),
             (torch.float16, torch.bfloat16), (torch.int64, torch.float16), (torch.bool, torch.bool),
             (torch.float32, torch.complex64), (torch.int32, torch.int64)]
    for da, db in pairs:
        a = bvals(da, seed=13)[:2]
        b = bvals(db, seed=14)[:1]
        add("views", "cat", [SEQ(T(a), T(b)), I(1)], lambda a=a, b=b: torch.cat([a, b], 0), ident="cat_promote")
        b2 = bvals(db, seed=15)[:2]
        add("views", "stack", [SEQ(T(a), T(b2)), I(2)], lambda a=a, b=b2: torch.stack([a, b], 1), ident="stack_promote")
    a = torch.arange(6.0).reshape(2, 3)
    for others, tfn in (
        ([T(torch.zeros(0))], lambda: torch.cat([a, torch.zeros(0)], 0)),
        ([T(torch.zeros(0, dtype=torch.int64))], lambda: torch.cat([a, torch.zeros(0, dtype=torch.int64)], 0)),
        ([T(torch.zeros(0, 3))], lambda: torch.cat([a, torch.zeros(0, 3)], 0)),
        ([T(torch.zeros(2, 0))], lambda: torch.cat([a, torch.zeros(2, 0)], 0)),
        ([T(torch.zeros(0, dtype=torch.float64))], lambda: torch.cat([a, torch.zeros(0, dtype=torch.float64)], 0)),
    ):
        add("views", "cat", [SEQ(T(a), *others), I(1)], tfn, ident="cat_empty")
    add("views", "cat", [SEQ(T(a), T(torch.zeros(2, 0))), I(2)], lambda: torch.cat([a, torch.zeros(2, 0)], 1), ident="cat_empty")
    add("views", "cat", [SEQ(T(a), T(a)), I(-1)], lambda: torch.cat([a, a], -1), ident="cat_negdim")
    add("views", "cat", [SEQ(T(a), T(a)), I(3)], lambda: torch.cat([a, a], 2), ident="cat_baddim")
    add("views", "cat", [SEQ(T(a), T(torch.zeros(3, 2))), I(1)], lambda: torch.cat([a, torch.zeros(3, 2)], 0), ident="cat_mismatch")
    add("views", "cat", [SEQ(T(a), T(torch.zeros(3))), I(1)], lambda: torch.cat([a, torch.zeros(3)], 0), ident="cat_ndim")
    add("views", "cat", [SEQ(), I(1)], lambda: torch.cat([], 0), ident="cat_nothing")
    add("views", "cat", [SEQ(T(a, [["t"]]), T(a, [["t"]])), I(2)], lambda: torch.cat([a.t(), a.t()], 1), ident="cat_nc")
    add("views", "cat", [SEQ(T(torch.tensor(1.0)), T(torch.tensor(2.0))), I(1)],
        lambda: torch.cat([torch.tensor(1.0), torch.tensor(2.0)], 0), ident="cat_0d")
    add("views", "stack", [SEQ(T(a), T(a)), I(3)], lambda: torch.stack([a, a], 2), ident="stack_dims")
    add("views", "stack", [SEQ(T(a), T(a)), I(-1)], lambda: torch.stack([a, a], -1), ident="stack_dims")
    add("views", "stack", [SEQ(T(a), T(a)), I(-3)], lambda: torch.stack([a, a], -3), ident="stack_dims")
    add("views", "stack", [SEQ(T(a), T(a)), I(4)], lambda: torch.stack([a, a], 3), ident="stack_dims")
    add("views", "stack", [SEQ(T(a), T(a.t().contiguous())), I(1)], lambda: torch.stack([a, a.t()], 0), ident="stack_mismatch")
    add("views", "stack", [SEQ(T(torch.tensor(1)), T(torch.tensor(2.5))), I(1)],
        lambda: torch.stack([torch.tensor(1), torch.tensor(2.5)], 0), ident="stack_0d")
    add("views", "stack", [SEQ(T(torch.zeros(0, 2)), T(torch.zeros(0, 2))), I(2)],
        lambda: torch.stack([torch.zeros(0, 2), torch.zeros(0, 2)], 1), ident="stack_empty")


# ================================================================ INDEXING
def gen_indexing():
    x = torch.arange(12, dtype=torch.int32).reshape(3, 4) * 3 - 10
    xf = x.t().contiguous()    # ltensor builds (4,3) then .t()
    NC = [["t"]]
    xnc = xf.t()

    def IDX(v):
        return {"kind": "index", "value": v}

    for base, bv, tb, tag in ((x, None, x, ""), (xf, NC, xnc, "_nc")):
        m = tb > 0
        add("indexing", "index", [T(base, bv), T(m)], lambda tb=tb, m=m: tb[m], call="index", ident="mask" + tag)
        m1 = torch.tensor([True, False, True])
        add("indexing", "index", [T(base, bv), T(m1)], lambda tb=tb: tb[m1], call="index", ident="mask_rows" + tag)
        add("indexing", "index", [T(base, bv), T(torch.tensor([True, False]))], lambda tb=tb: tb[torch.tensor([True, False])],
            call="index", ident="mask_bad" + tag)
        for iv in ([2, 0, 2], [-1, 0], [], [[0, 1], [2, 2]], [3], [-4]):
            it = torch.tensor(iv, dtype=torch.int64)
            lt_iv = (it + (it >= 0).long()).tolist()  # 1-based, negatives unchanged
            add("indexing", "index", [T(base, bv), T(torch.tensor(lt_iv, dtype=torch.int64).reshape(it.shape))],
                lambda tb=tb, it=it: tb[it], call="index", ident="gather" + tag)
        it = torch.tensor([3, 0])
        add("indexing", "index", [T(base, bv), IDX([{}, T(it + 1)])], lambda tb=tb, it=it: tb[:, it], call="index",
            ident="gather_dim2" + tag)
        add("indexing", "index", [T(base, bv), IDX([-1, {}])], lambda tb=tb: tb[-1, :], call="index", ident="int_range" + tag)
        add("indexing", "index", [T(base, bv), IDX([[2, 3], -2])], lambda tb=tb: tb[1:3, -2], call="index", ident="int_range" + tag)
        add("indexing", "index", [T(base, bv), IDX([[-2, -1], [1, -1]])], lambda tb=tb: tb[-2:, 0:], call="index",
            ident="int_range" + tag)
        add("indexing", "index", [T(base, bv), IDX([[3, 2], {}])], lambda tb=tb: tb[2:1, :], call="index",
            ident="int_range" + tag, note="an empty inclusive range {3, 2}")
        add("indexing", "index", [T(base, bv), IDX([4, 1])], lambda tb=tb: tb[3, 0], call="index", ident="oob" + tag)
        add("indexing", "index", [T(base, bv), IDX([1, 1, 1])], lambda tb=tb: tb[0, 0, 0], call="index", ident="too_many" + tag)
        # setindex with broadcasting and casting
        for key, klt, val, vlt in (
            ((tb > 0), T(tb > 0), -1, I(-1)),
            ((tb > 0), T(tb > 0), 2.7, F(2.7)),
            ((slice(None), 1), IDX([{}, 2]), torch.tensor([7, 8, 9], dtype=torch.int64), T(torch.tensor([7, 8, 9]))),
            ((slice(None), slice(1, 3)), IDX([{}, [2, 3]]), torch.tensor([5.9, -5.9]), T(torch.tensor([5.9, -5.9]))),
            (torch.tensor([0, 2]), T(torch.tensor([1, 3])), torch.tensor([1, 2, 3, 4], dtype=torch.int32),
             T(torch.tensor([1, 2, 3, 4], dtype=torch.int32))),
            (torch.tensor([0, 0]), T(torch.tensor([1, 1])), torch.tensor([[1, 2, 3, 4], [5, 6, 7, 8]], dtype=torch.int32),
             T(torch.tensor([[1, 2, 3, 4], [5, 6, 7, 8]], dtype=torch.int32))),
            (torch.tensor([True, False, True]), T(torch.tensor([True, False, True])), torch.tensor([[100], [200]], dtype=torch.int32),
             T(torch.tensor([[100], [200]], dtype=torch.int32))),
            ((1,), IDX([2]), torch.tensor([1, 2]), T(torch.tensor([1, 2]))),
            ((1,), IDX([2]), True, B(True)),
            ((tb > 100), T(tb > 100), 5, I(5)),
        ):
            def fset(tb=tb, key=key, val=val):
                c = tb.clone()
                c[key] = val
                return c
            add("indexing", "setindex", [T(base, bv), klt, vlt], fset, call="setindex", ident="set" + tag)
    # float tensor gathered with index on a float dtype; setindex into int with float value truncates
    xf2 = torch.tensor([[1.5, -2.5], [3.25, 4.0]])
    add("indexing", "index", [T(xf2), T(torch.tensor([1.0]))], lambda: xf2[torch.tensor([0.0])], call="index",
        ident="float_index")
    add("indexing", "index", [T(xf2), T(torch.tensor([2, 1], dtype=torch.int32))],
        lambda: xf2[torch.tensor([1, 0], dtype=torch.int64)], call="index", ident="int32_index",
        note="PyTorch 1.13 refuses int32 index tensors; ltensor accepts them like int64 (its documented extension)")
    add("indexing", "index", [T(xf2), T(torch.tensor([1, 0], dtype=torch.uint8))],
        lambda: xf2[torch.tensor([1, 0], dtype=torch.uint8)], call="index", ident="uint8_mask",
        note="uint8 index tensors are masks in PyTorch 1.13 (deprecated)")
    z = torch.tensor(5.0)
    add("indexing", "index", [T(z), T(torch.tensor(True))], lambda: z[torch.tensor(True)], call="index", ident="zerodim_mask")
    add("indexing", "index", [T(z), T(torch.tensor(False))], lambda: z[torch.tensor(False)], call="index", ident="zerodim_mask")


# ================================================================ MATMUL
def gen_matmul():
    g = torch.Generator().manual_seed(21)

    def r(shape, dt):
        v = torch.randint(-4, 5, shape, generator=g)
        return v.to(dt) if dt != torch.bool else (v > 0)

    shapes = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((2, 2, 3), (3, 4)),
              ((3,), (2, 3, 4)), ((2, 1, 2, 3), (5, 3, 2)), ((2, 3, 4), (4,)), ((0, 3), (3, 2)), ((2, 0), (0, 3)),
              ((2, 3), (4, 5)), ((3,), (4,)), ((), (3,)), ((2, 2, 3), (3, 3, 2)), ((1, 2, 3), (4, 3, 2))]
    for dt in (torch.float32, torch.float64, torch.int64, torch.int32, torch.uint8, torch.float16, torch.bool,
               torch.complex64, torch.int8):
        for sa, sb in shapes:
            if dt not in (torch.float32, torch.int64) and sa in ((), (2, 3), (3,)) and sb not in ((3, 4),):
                continue
            a, b = r(sa, dt), r(sb, dt)
            add("matmul", "matmul", [T(a), T(b)], lambda a=a, b=b: torch.matmul(a, b),
                lowp=(lambda a=a, b=b: torch.matmul(a.float(), b.float()).to(a.dtype)) if dt in LOWP else None)
    a = r((3, 2), torch.float32)
    b = r((4, 3), torch.float32)
    add("matmul", "matmul", [T(a, [["t"]]), T(b, [["t"]])], lambda: torch.matmul(a.t(), b.t()), ident="matmul_nc")
    add("matmul", "mm", [T(a, [["t"]]), T(b, [["t"]])], lambda: torch.mm(a.t(), b.t()), ident="mm_nc")
    e = r((1, 3), torch.float64)
    add("matmul", "matmul", [T(e, [["expand", 4, 3]]), T(b.double(), [["t"]])], lambda: torch.matmul(e.expand(4, 3), b.double().t()),
        ident="matmul_expanded")
    # mixed dtypes: PyTorch 1.13 refuses them (no promotion in matmul)
    for da, db in ((torch.float32, torch.float64), (torch.int64, torch.float32), (torch.int32, torch.int64),
                   (torch.float32, torch.complex64)):
        a, b = r((2, 3), da), r((3, 2), db)
        for n in ("matmul", "mm"):
            add("matmul", n, [T(a), T(b)], lambda n=n, a=a, b=b: getattr(torch, n)(a, b), ident=n + "_mixed")
        v1, v2 = r((3,), da), r((3,), db)
        add("matmul", "dot", [T(v1), T(v2)], lambda v1=v1, v2=v2: torch.dot(v1, v2), ident="dot_mixed")
        add("matmul", "outer", [T(v1), T(v2)], lambda v1=v1, v2=v2: torch.outer(v1, v2), ident="outer_mixed")
    # shape errors of the specific ops
    for n, sa, sb in (("mm", (2, 3), (4, 2)), ("mm", (2, 3), (3,)), ("bmm", (2, 2, 3), (3, 3, 2)), ("bmm", (2, 3), (3, 2)),
                      ("mv", (2, 3), (2,)), ("mv", (2, 3), (3, 1)), ("dot", (3,), (2,)), ("dot", (2, 2), (2, 2)),
                      ("outer", (2, 1), (3,)), ("bmm", (2, 2, 3), (2, 3, 4)), ("mv", (0, 3), (3,)), ("dot", (0,), (0,))):
        a, b = r(sa, torch.float64), r(sb, torch.float64)
        add("matmul", n, [T(a), T(b)], lambda n=n, a=a, b=b: getattr(torch, n)(a, b), ident=n + "_shapes")
    for n in ("mm", "mv", "dot", "bmm", "outer"):
        for dt in (torch.int32, torch.uint8, torch.bool, torch.float16, torch.bfloat16):
            shp = {"mm": ((2, 3), (3, 2)), "mv": ((2, 3), (3,)), "dot": ((3,), (3,)), "bmm": ((2, 2, 3), (2, 3, 2)),
                   "outer": ((2,), (3,))}[n]
            a, b = r(shp[0], dt), r(shp[1], dt)
            add("matmul", n, [T(a), T(b)], lambda n=n, a=a, b=b: getattr(torch, n)(a, b), ident=n + "_dtypes",
                lowp=(lambda n=n, a=a, b=b: getattr(torch, n)(a.float(), b.float()).to(a.dtype)) if dt in LOWP else None)
    # int overflow in matmul wraps
    big = torch.tensor([[2**31 - 1, 2]], dtype=torch.int32)
    add("matmul", "matmul", [T(big), T(torch.tensor([[2], [1]], dtype=torch.int32))],
        lambda: torch.matmul(big, torch.tensor([[2], [1]], dtype=torch.int32)), ident="matmul_int_wrap")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "spec/fixtures/diff_cases.lua"
    gen_unary()
    gen_binary()
    gen_overflow()
    gen_reductions()
    gen_inplace()
    gen_views()
    gen_indexing()
    gen_matmul()
    ncat = {}
    for c in cases:
        ncat[c["cat"]] = ncat.get(c["cat"], 0) + 1
    with open(out, "w") as f:
        f.write("-- ltensor differential cases generated from PyTorch %s by tools/gen_diff_cases.py\n" % torch.__version__)
        f.write("-- %d cases: %s\n" % (len(cases), ", ".join("%s=%d" % kv for kv in ncat.items())))
        f.write("-- Format: ../shared/conformance/run.lua's, plus tensor operands' `view` steps and complex\n"
                "-- {re, im} data (see spec/diff_runner.lua). Do not edit by hand; regenerate.\n")
        f.write("return {\n")
        for c in cases:
            f.write(lua(c) + ",\n")
        f.write("}\n")
    print("%d cases -> %s (%s)" % (len(cases), out, ncat))


if __name__ == "__main__":
    main()
