"""Control flow for the kernel tracer: return, if/elif/else, for/range, parallel and while.

Mixed into ``Tracer``; the rules (iter_args, scf.if results, loop-local names) are in ``tracer.py``.
"""

from __future__ import annotations

import ast
import builtins

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import affine, scf
from xdsl.dialects.builtin import AffineMapAttr, IndexType
from xdsl.ir import Block, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from loom.errors import LoomError
from loom.frontends.kernel import intrinsics
from loom.frontends.kernel import loop_exits, loop_iterables, ranges
from loom.frontends.kernel import values as V
from loom.frontends.kernel.analysis import assigned_names
from loom.frontends.kernel.expressions import _RET_N
from loom.frontends.kernel.kernel_types import F64, Index, ScalarType, scalar_of_numpy
from loom.frontends.kernel.signature import _MISSING
from loom.frontends.kernel.values import PY_CONST, AffineForm, Value


def _at(node, where: ast.AST):
    return ast.fix_missing_locations(ast.copy_location(node, where))


class ControlFlowMixin:
    # ------------------------------------------------------------ return

    def st_Return(self, st: ast.Return, tail: bool):
        if not tail or self.loop_depth:
            raise self.err("return must be the last statement of a helper or intrinsic body (or end both arms of a "
                           "final if); set a variable and 'break' instead (kernels themselves may return anywhere)",
                           st, "return")
        if st.value is None:
            vals = []
        elif isinstance(st.value, ast.Tuple):
            vals = [self.ev(e) for e in st.value.elts]
        else:
            vals = [self.ev(st.value)]
        if self._inlining:  # a helper's values stay as they are (a literal keeps adopting its use's type)
            for i, v in enumerate(vals):
                self.bind(f"$ret{i}", v)
            self.bind(_RET_N, len(vals))
            return
        if self.result_types is None:
            self.result_types = [v.stype if isinstance(v, Value) else V.default_type(v) if isinstance(v, PY_CONST)
                                 else None for v in vals]
            if None in self.result_types:
                raise self.err("kernels return scalars only", st, "return")
        if len(vals) != len(self.result_types):
            raise self.err(f"returning {len(vals)} value(s) but the kernel returns {len(self.result_types)} "
                           f"({', '.join(str(t) for t in self.result_types)})", st, "return")
        for i, (v, t) in enumerate(zip(vals, self.result_types)):
            v = V.adopt_literal_choice(v, t, f"return value {i}")
            if isinstance(v, Value) and v.stype is not t:
                raise self.err(f"inconsistent return types: return value {i} has type {v.stype.xdsl}, but the "
                               f"kernel returns {t.xdsl}", st, "return")
            self.bind(f"$ret{i}", self.coerce(v, t, f"return value {i}", st))
        self.bind(_RET_N, len(vals))

    # ------------------------------------------------------------ if

    def st_If(self, st: ast.If, tail: bool):
        self.mark_truth_test(st.test)
        cond = self.ev(st.test)
        if isinstance(cond, PY_CONST) or scalar_of_numpy(cond) is not None:
            # folded at trace time: only the taken arm is emitted
            self.exec_block(st.body if cond else st.orelse, tail)
            return
        cond = self.condition(cond, st.test)
        self.ctx.loc = self.loc(st)
        self.emit_if(cond, lambda: self.exec_block(st.body, tail), lambda: self.exec_block(st.orelse, tail), st)

    def condition(self, c, node, truth: bool = True) -> Value:
        """``c`` as an i1. ``truth``: a number stands for ``c != 0`` as Python's truth test (``if n:``, ``while v:``;
        a float nan is true); where the value itself is the result (``x = a and b``) only i1 is taken."""
        if truth and isinstance(c, Value) and c.stype.kind != "bool":
            return V.compare("!=", c, 0)
        if isinstance(c, Value) and c.stype.kind != "bool":
            raise self.err(f"'and'/'or' used as a value takes i1 operands, got {c.stype.xdsl} (Python would give "
                           "back one of the operands: write it out, e.g. 'x if x != 0 else y')", node, "condition")
        if not isinstance(c, Value) or c.stype.kind != "bool":
            raise self.err(f"condition must be an i1 value (a comparison), got {V.type_name(c)}", node, "condition")
        return c

    def mark_truth_test(self, test: ast.expr) -> None:
        """``test`` is an if/while/conditional-expression test: its and/or operands are truth-tested too."""
        stack = [test]
        while stack:
            n = stack.pop()
            if isinstance(n, ast.BoolOp):
                self.truth_tests.add(n)  # the node itself: kept alive, its id is never another node's
                stack.extend(n.values)

    def emit_if(self, cond: Value, then_fn, else_fn, node):
        env0, dead0 = dict(self.env), dict(self.dead)
        arms = []
        for fn in (then_fn, else_fn):
            self.env, self.dead = dict(env0), dict(dead0)
            blk = Block()
            with ImplicitBuilder(blk):
                fn()
            arms.append((blk, self.env, self.dead))
        (bt, et, dt), (be, ee, de) = arms
        line = node.lineno + self.src.line_offset
        self.env, self.dead = dict(env0), {**dead0, **dt, **de}
        names = list(dict.fromkeys([*et, *ee]))
        results = []  # (name, stype, then value, else value)
        for n in names:
            vt, ve = et.get(n, _MISSING), ee.get(n, _MISSING)
            if vt is _MISSING or ve is _MISSING:
                if n.startswith("$ret"):
                    raise self.err("return in only one branch of the if; return in both branches "
                                   "(or once after the if)", node, "return")
                self.env.pop(n, None)
                self.dead[n] = (f"'{n}' is assigned in only one branch of the if at line {line} and undefined "
                                "in the other; assign it before the if or in both branches")
                continue
            if vt is ve:
                self.env[n] = vt
                continue
            if isinstance(vt, PY_CONST) and isinstance(ve, PY_CONST) and type(vt) is type(ve) and vt == ve:
                self.env[n] = vt
                continue
            if n == _RET_N:
                raise self.err("inconsistent number of return values between the branches", node, "return")
            st_ = self._merge_type(n, vt, ve, node)
            results.append((n, st_, vt, ve))
        for blk, side in ((bt, 2), (be, 3)):
            with ImplicitBuilder(blk):
                self.ctx.loc = self.loc(node)
                vals = [V.as_value(V.adopt_literal_choice(r[side], r[1], "if"), r[1]).ssa for r in results]
                scf.YieldOp(*vals).location = self.ctx.loc
        op = scf.IfOp(cond.ssa, [r[1].xdsl for r in results], Region(bt), Region(be))
        op.location = self.loc(node)
        for (n, st_, _, _), res in zip(results, op.results):
            self.env[n] = Value(res, st_)
            self.dead.pop(n, None)

    def _merge_type(self, n, vt, ve, node) -> ScalarType:
        what = "return value" if n.startswith("$ret") else f"variable '{n}'"
        for v in (vt, ve):
            if not isinstance(v, (Value,) + PY_CONST):
                raise self.err(f"{what} is assigned {V.type_name(v)} in a branch of an if; only scalars can be "
                               "merged after an if", node, "if")
        if isinstance(vt, Value) and isinstance(ve, Value) and vt.stype is not ve.stype:
            # `1 if c else 0` in one arm takes the other's type, as a literal would
            if isinstance(vt, V.LiteralChoice) and not isinstance(ve, V.LiteralChoice):
                return ve.stype
            if isinstance(ve, V.LiteralChoice) and not isinstance(vt, V.LiteralChoice):
                return vt.stype
        if isinstance(vt, Value) and isinstance(ve, Value):
            if vt.stype is not ve.stype:
                kind = "inconsistent return types" if n.startswith("$ret") else "type mismatch between branches"
                raise self.err(f"{kind}: {what} is {vt.stype.xdsl} in the then-branch and {ve.stype.xdsl} in "
                               "the else-branch", node, "if")
            return vt.stype
        if isinstance(vt, Value) or isinstance(ve, Value):
            val, const = (vt, ve) if isinstance(vt, Value) else (ve, vt)
            if isinstance(const, float) and not val.stype.is_float:
                raise self.err(f"{what} is {val.stype.xdsl} in one branch and the float {const!r} in the other",
                               node, "if")
            return val.stype
        if isinstance(vt, float) or isinstance(ve, float):
            return F64
        return V.default_type(vt)

    # ------------------------------------------------------------ loops

    def carried_vars(self, body, exclude=()) -> list[str]:
        out = []
        for n in assigned_names(body):
            if n in self.env and n not in exclude:
                v = self.env[n]
                if not isinstance(v, (Value,) + PY_CONST):
                    raise LoomError(f"variable '{n}' ({V.type_name(v)}) cannot be reassigned inside a loop; "
                                    "only scalars can be loop-carried")
                out.append(n)
        return out

    def _speculate(self, carried: list[str], run, opaque: dict | None = None) -> dict:
        """Trace ``run`` into a scratch block to learn the types carried constants take. ``opaque``: carried names
        (-> type) bound to unknown values of that type instead of their constant before the loop."""
        env0, dead0, depth = dict(self.env), dict(self.dead), self.loop_depth
        n_scopes, loc = len(self.dealloc_scopes), self.ctx.loc
        opaque = opaque or {}
        scratch = Block(arg_types=[IndexType(), *[t.xdsl for t in opaque.values()]])
        out = {}
        try:
            with ImplicitBuilder(scratch):
                for (n, t), a in zip(opaque.items(), scratch.args[1:]):
                    self.bind(n, Value(a, t))
                run(scratch.args[0])
            out = {n: self.env.get(n) for n in carried}
        except LoomError:
            pass
        finally:
            self.env, self.dead, self.loop_depth = env0, dead0, depth
            del self.dealloc_scopes[n_scopes:]
            self.ctx.loc = loc
            for op in reversed(list(scratch.ops)):
                scratch.erase_op(op, safe_erase=False)
        return out

    def carried_types(self, carried: list[str], run) -> list[ScalarType] | None:
        consts = [n for n in carried if isinstance(self.env[n], PY_CONST + (V.LiteralChoice,))]
        if not consts:
            return [self.env[n].stype for n in carried]
        # Round 1 traces the body with the constants as they are before the loop. A condition on one of them
        # folds there (`if s > 10.0` with `s = 0.0`), so a variable assigned under it looked unchanged and was not
        # carried (a wrong result, or a while loop whose break never stopped it): the next rounds bind every
        # carried constant found to change to an unknown value of its type, until no other one turns out to.
        guess = self._speculate(carried, run)
        opaque: dict = {}
        while guess:
            changed = {n: t for n in consts if n not in opaque and (t := self._carried_type(n, guess.get(n)))}
            if not changed:
                break
            opaque.update(changed)
            if len(opaque) == len(consts):  # nothing left to find: the types of all are known
                break
            again = self._speculate(carried, run, opaque)
            if not again:  # the trace failed with them unknown: keep what the last round found
                break
            guess = again
        return [self._carried_type(n, guess.get(n)) for n in carried]

    def _carried_type(self, n: str, g) -> ScalarType | None:
        """The type of carried variable ``n`` given its value ``g`` after a speculative trace of the body (None:
        it stays the constant it is before the loop, so it is not carried)."""
        v0 = self.env[n]
        if isinstance(v0, V.LiteralChoice):  # `c = 1 if p else 0`: the type the body gives it, as a literal
            return g.stype if isinstance(g, Value) else v0.stype
        if isinstance(v0, Value):
            return v0.stype
        if isinstance(g, Value):
            return g.stype
        if isinstance(g, PY_CONST) and type(g) is type(v0) and g == v0:
            return None
        if isinstance(g, float) or isinstance(v0, float):
            return F64
        return V.default_type(v0)

    def st_For(self, st: ast.For):
        if st.orelse:
            return self._loop_with_else(st)
        it = st.iter
        if not isinstance(it, ast.Call) and isinstance(seq := self.ev(it), (tuple, list)):
            return self._unroll(st, seq)
        if not isinstance(it, ast.Call) or self.ev(it.func) in (builtins.enumerate, builtins.zip):
            iteration = loop_iterables.rewrite_iteration(st)  # for x in X / enumerate / zip: a range loop
            if iteration is not None:
                return self.exec_stmt(iteration, False)
        if any(loop_exits.exits_of(st.body)) and not self._is_parallel(it):
            return self._exec_rewritten(st)
        fobj = self.ev(it.func) if isinstance(it, ast.Call) else None
        if fobj is intrinsics.parallel:
            return self.parallel_loop(st)
        if fobj is not builtins.range:
            raise self.err("only 'for ... in range(...)', 'for ... in parallel(...)' and iteration over memrefs "
                           "('for x in X', enumerate(X), zip(X, Y)) are supported", it, "for")
        if it.keywords:
            raise self.err("range() takes no keyword arguments in kernels", it, "range")
        if any(isinstance(a, ast.Starred) for a in it.args) or not 1 <= len(it.args) <= 3:
            raise self.err("range() takes 1 to 3 positional arguments in kernels", it, "range")
        if not isinstance(st.target, ast.Name):
            raise self.err("the loop variable of a range loop must be a single name", st.target, "for")
        args = [self.ev(a) for a in it.args]
        for a, n in zip(args, it.args):
            self.check_index(a, n, "range bound")
        lb, ub, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) == 3 else 1)
        if isinstance(step, int) and step == 0:
            raise self.err("range() step must not be zero", it, "range")
        name = st.target.id
        carried = self.carried_vars(st.body, exclude=(name,))
        brk = getattr(st, loop_exits.BREAK_FLAG, None)
        if brk is not None:
            return self._range_while(st, name, lb, ub, step, carried, brk)

        user_lb, user_step = lb, step
        normalised = ranges.needs_normalising(step)
        bounds = (None, None)
        if normalised:  # counting down or a run-time step: k in [0, len), the variable is lb + k * step
            self.ctx.loc = self.loc(it)
            length_map = None if self.loops != "affine" or all(isinstance(x, int) for x in (lb, ub, step)) \
                else ranges.affine_length_bound(lb, ub, step)
            if length_map is not None:
                bounds = (self._affine_bound(0), length_map)
            lb, ub, step = 0, (None if length_map else ranges.range_length(lb, ub, step)), 1
        if bounds == (None, None) and self.loops == "affine" and isinstance(step, int):
            bounds = (self._affine_bound(lb), self._affine_bound(ub))
        use_affine = None not in bounds

        carried_names = []  # read by `run` during the speculative typing trace
        run = self._counter_body(st, name, normalised, user_lb, user_step, use_affine, carried_names)
        carried_names[:], ctypes = self._typed_carried(carried, run)
        self.ctx.loc = self.loc(st)
        inits = [V.as_value(V.adopt_literal_choice(self.env[n], t, f"loop-carried variable '{n}'"), t)
                 for n, t in zip(carried_names, ctypes)]
        env0, dead0 = dict(self.env), dict(self.dead)
        body = Block(arg_types=[IndexType(), *[t.xdsl for t in ctypes]])
        with ImplicitBuilder(body):
            run(body.args[0], [Value(a, t) for a, t in zip(body.args[1:], ctypes)])
            self.ctx.loc = self.loc(st)
            outs = [self.coerce_carried(n, t, st) for n, t in zip(carried_names, ctypes)]
            if use_affine:
                affine.YieldOp.get(*outs).location = self.ctx.loc
            else:
                scf.YieldOp(*outs).location = self.ctx.loc
        body_env = self.env
        self.env, self.dead = env0, {**dead0, **self.dead}
        if use_affine:
            (lmap, lops), (umap, uops) = bounds
            op = affine.ForOp.from_region(lops, uops, [v.ssa for v in inits], [t.xdsl for t in ctypes],
                                          lmap, umap, Region(body), step)
        else:
            lbv, ubv, stv = (V.as_value(x, Index) for x in (lb, ub, step))
            op = scf.ForOp(lbv.ssa, ubv.ssa, stv.ssa, [v.ssa for v in inits], Region(body))
        op.location = self.loc(st)
        for n, t, r in zip(carried_names, ctypes, op.results):
            self.bind(n, Value(r, t))
        self._scope_end(st, body_env, env0, name, "loop")

    def _counter_body(self, st: ast.For, name: str, normalised: bool, user_lb, user_step, affine_dim: bool,
                      carried_names: list[str]):
        """The body of a counting loop as a function of its counter and carried values: binds the user's loop
        variable (from the counter over ``[0, len)`` when ``normalised``) and ``carried_names`` (a list the caller
        fills once the carried values are typed), then runs the body."""
        def run(iv, carried_vals=None):
            k = Value(iv, Index, AffineForm({iv: 1}, 0, affine_dim))
            self.bind(name, ranges.user_variable(k, user_lb, user_step) if normalised else k)
            for n, v in zip(carried_names, carried_vals or ()):
                self.bind(n, v)
            self._exec_loop_body(st.body)
        return run

    def _range_while(self, st: ast.For, name: str, lb, ub, step, carried: list[str], brk: str):
        """A range loop that breaks (``loop_exits``): an scf.while over its counter, ``k < ub and not brk``, so
        it stops at the break instead of counting out the rest of the range. The counter is the first value
        carried; a counting-down or run-time step runs ``k`` over ``[0, len)`` as ``st_For`` does."""
        user_lb, user_step = lb, step
        normalised = ranges.needs_normalising(step)
        self.ctx.loc = self.loc(st.iter)
        if normalised:
            lb, ub, step = 0, ranges.range_length(lb, ub, step), 1
        lbv, ubv = V.as_value(lb, Index), V.as_value(ub, Index)

        names = []  # read by `run` during the speculative typing trace
        # a while's block argument is not an affine dim
        run = self._counter_body(st, name, normalised, user_lb, user_step, False, names)
        names[:], ctypes = self._typed_carried(carried, run)
        self.ctx.loc = self.loc(st)
        inits = [lbv.ssa] + [self.coerce(self.env[n], t, f"loop-carried variable '{n}'", st).ssa
                             for n, t in zip(names, ctypes)]
        types = [IndexType(), *[t.xdsl for t in ctypes]]
        env0, dead0 = dict(self.env), dict(self.dead)
        before = Block(arg_types=types)
        with ImplicitBuilder(before):
            self.ctx.loc = self.loc(st)
            for n, a, t in zip(names, before.args[1:], ctypes):
                self.bind(n, Value(a, t))
            cond = V.compare("<", Value(before.args[0], Index), ubv)
            flag = self.env.get(brk)
            if isinstance(flag, Value):  # (a break the tracer folded away leaves the flag a constant False)
                cond = V.logical("and", cond, V.unary("not", flag))
            scf.ConditionOp(cond.ssa, *before.args).location = self.ctx.loc
        self.env, self.dead = dict(env0), dict(dead0)
        after = Block(arg_types=types)
        with ImplicitBuilder(after):
            run(after.args[0], [Value(a, t) for a, t in zip(after.args[1:], ctypes)])
            self.ctx.loc = self.loc(st)
            nxt = V.as_value(V.binary("+", Value(after.args[0], Index), step), Index)
            outs = [nxt.ssa] + [self.coerce_carried(n, t, st) for n, t in zip(names, ctypes)]
            scf.YieldOp(*outs).location = self.ctx.loc
        body_env = self.env
        self.env, self.dead = env0, {**dead0, **self.dead}
        op = scf.WhileOp(inits, types, Region(before), Region(after))
        op.location = self.loc(st)
        for n, t, r in zip(names, ctypes, op.results[1:]):
            self.bind(n, Value(r, t))
        self._scope_end(st, body_env, env0, name, "loop")

    def coerce_carried(self, n, t: ScalarType, st) -> SSAValue:
        if n not in self.env:
            raise self.err(self.dead.get(n, f"'{n}' is undefined at the end of the loop body"), st, "for")
        v = self.env[n]
        if isinstance(v, Value) and v.stype is not t:
            raise self.err(f"variable '{n}' changes type inside the loop: {t.xdsl} before, {v.stype.xdsl} after "
                           "(cast explicitly)", st, "for")
        return self.coerce(v, t, f"loop-carried variable '{n}'", st).ssa

    def _scope_end(self, st, body_env, env0, ivname, what):
        line = st.lineno + self.src.line_offset
        for n in body_env:
            if n not in env0 and n != ivname:
                self.env.pop(n, None)
                self.dead[n] = (f"'{n}' is defined inside the {what} at line {line} and is not visible after it "
                                f"(assign it before the {what} to carry it out)")
        if ivname is not None:
            # Python would leave the last value in it; kernels scope it to the loop instead
            self.env.pop(ivname, None)
            self.dead[ivname] = (f"'{ivname}' is the induction variable of the {what} at line {line} and is not "
                                 f"visible after it (Python would keep its last value: to keep one, assign it to a "
                                 f"variable defined before the {what}, e.g. 'found = {ivname}' before a break)")

    def _affine_bound(self, x):
        if isinstance(x, int):
            return AffineMapAttr(AffineMap(0, 0, (AffineExpr.constant(x),))), []
        if isinstance(x, Value) and x.affine is not None and x.affine.valid:
            ops = list(x.affine.terms)
            return AffineMapAttr(AffineMap(len(ops), 0, (x.affine.to_xdsl(ops),))), ops
        return None

    def check_index(self, a, node, what):
        if isinstance(a, bool) or not (isinstance(a, int) or (isinstance(a, Value) and a.stype is Index)):
            hint = " (cast with Index(x))" if isinstance(a, Value) and a.stype.is_int_like else ""
            raise self.err(f"{what} must be an index value or a Python int, got {V.type_name(a)}{hint}", node,
                           "index")

    def parallel_loop(self, st: ast.For):
        it = st.iter
        if it.keywords or any(isinstance(a, ast.Starred) for a in it.args):
            raise self.err("parallel() takes positional arguments only", it, "parallel")
        args = [self.ev(a) for a in it.args]
        if args and all(isinstance(a, tuple) for a in args):
            if len(args) == 1:
                lbs, ubs, steps = [0] * len(args[0]), list(args[0]), [1] * len(args[0])
            elif len(args) in (2, 3):
                lbs, ubs = list(args[0]), list(args[1])
                steps = list(args[2]) if len(args) == 3 else [1] * len(ubs)
            else:
                raise self.err("parallel((lbs), (ubs)[, (steps)])", it, "parallel")
        elif args and not any(isinstance(a, tuple) for a in args):
            lbs, ubs, steps = [0] * len(args), args, [1] * len(args)
        else:
            raise self.err("use parallel(ub0, ub1, ...) or parallel((lb0, ...), (ub0, ...)[, (step0, ...)])", it,
                           "parallel")
        if not (len(lbs) == len(ubs) == len(steps)) or not ubs:
            raise self.err("parallel(): lower bounds, upper bounds and steps must have the same length", it,
                           "parallel")
        for x in [*lbs, *ubs, *steps]:
            self.check_index(x, it, "parallel bound")
        for s in steps:
            if isinstance(s, int) and s <= 0:
                raise self.err(f"parallel step must be positive (got {s})", it, "parallel")
        tgt = st.target
        names = [tgt.id] if isinstance(tgt, ast.Name) else [
            e.id for e in tgt.elts if isinstance(e, ast.Name)] if isinstance(tgt, ast.Tuple) else None
        if names is None or (isinstance(tgt, ast.Tuple) and len(names) != len(tgt.elts)) or len(names) != len(ubs):
            raise self.err(f"the parallel loop needs {len(ubs)} loop variable name(s)", tgt, "parallel")
        outer = [n for n in assigned_names(st.body) if n in self.env and n not in names]
        if outer:
            raise self.err(f"a parallel loop cannot update variables defined before it ({', '.join(outer)}); "
                           "write results to a memref", st, "parallel")
        self.ctx.loc = self.loc(st)
        lbv, ubv, stv = ([V.as_value(x, Index).ssa for x in xs] for xs in (lbs, ubs, steps))
        env0, dead0 = dict(self.env), dict(self.dead)
        body = Block(arg_types=[IndexType()] * len(ubs))
        with ImplicitBuilder(body):
            for n, a in zip(names, body.args):
                self.bind(n, Value(a, Index, AffineForm({a: 1}, 0, False)))
            self._exec_loop_body(st.body)
            scf.ReduceOp().location = self.loc(st)
        body_env = self.env
        self.env, self.dead = env0, {**dead0, **self.dead}
        op = scf.ParallelOp(lbv, ubv, stv, Region(body))
        op.location = self.loc(st)
        for n in names:
            self._scope_end(st, body_env, env0, n, "parallel loop")

    def _exec_loop_body(self, body) -> None:
        self.loop_depth += 1
        try:
            self.exec_block(body)
        finally:
            self.loop_depth -= 1

    def _typed_carried(self, carried, run):
        """The loop-carried names whose type is known, and those types (constant-initialised
        ones are typed by a speculative trace of the body through ``run``)."""
        types = self.carried_types(carried, run) if carried else []
        return [n for n, t in zip(carried, types) if t is not None], [t for t in types if t is not None]

    def _unroll(self, st: ast.For, seq):
        """``for c in COEFS`` over a Python tuple: unrolled at trace time, the body once per element."""
        if any(loop_exits.exits_of(st.body)):
            raise self.err("break/continue in a loop over a Python tuple (it is unrolled at trace time); "
                           "loop over range(len(...)) instead", st, "for")
        for value in seq:
            self.assign(st.target, value, st)
            self.exec_block(st.body)

    def _is_parallel(self, it) -> bool:
        return isinstance(it, ast.Call) and self.ev(it.func) is intrinsics.parallel

    def _loop_with_else(self, st: ast.For | ast.While):
        """``for/while ... else``: the else clause runs after the loop unless it broke (its break flag,
        ``loop_exits``, is false; a return from the loop is a break too)."""
        what = "for" if isinstance(st, ast.For) else "while"
        for node in ast.walk(ast.Module(body=list(st.orelse), type_ignores=[])):
            if isinstance(node, ast.Return) or (isinstance(node, (ast.Break, ast.Continue))
                                                and not self._inside_loop_of(node, st.orelse)):
                word = type(node).__name__.lower()
                raise self.err(f"'{word}' in the else clause of a {what} loop is not supported in kernels; set a "
                               "variable there and test it after the loop", node, f"{what}-else")
        loop = st.__class__(**{f: getattr(st, f) for f in st._fields})
        loop.orelse = []
        loop = ast.copy_location(loop, st)  # same place: the same break flag name
        breaks = loop_exits.exits_of(st.body)[0] and not (isinstance(st, ast.For) and self._is_parallel(st.iter))
        self.exec_stmt(loop, False)
        if not breaks:
            for s in st.orelse:
                self.exec_stmt(s, False)
            return
        flag = _at(ast.Name(id=loop_exits.break_flag(st), ctx=ast.Load()), st.orelse[0])
        test = _at(ast.UnaryOp(op=ast.Not(), operand=flag), st.orelse[0])
        self.exec_stmt(_at(ast.If(test=test, body=list(st.orelse), orelse=[]), st.orelse[0]), False)

    @staticmethod
    def _inside_loop_of(node, stmts) -> bool:
        """Is ``node`` (a break/continue in ``stmts``) inside a loop of ``stmts`` (so it leaves that loop)?"""
        for s in stmts:
            for inner in ast.walk(s):
                if isinstance(inner, (ast.For, ast.While)) and any(n is node for n in ast.walk(inner)):
                    return True
        return False

    def _exec_rewritten(self, loop):
        """A loop with break/continue: flags instead (``loop_exits``)."""
        before, new = loop_exits.rewrite_loop(loop)
        for s in before:
            self.exec_stmt(s, False)
        self.exec_stmt(new, False)

    def st_While(self, st: ast.While):
        if st.orelse:
            return self._loop_with_else(st)
        if any(loop_exits.exits_of(st.body)):
            return self._exec_rewritten(st)
        carried = self.carried_vars(st.body)

        def run_body(_iv=None, vals=None):
            for n, v in zip(names, vals or ()):
                self.bind(n, v)
            self._exec_loop_body(st.body)

        names = []  # read by `run_body` during the speculative typing trace
        names, ctypes = self._typed_carried(carried, run_body)
        self.ctx.loc = self.loc(st)
        inits = [self.coerce(self.env[n], t, f"loop-carried variable '{n}'", st).ssa for n, t in zip(names, ctypes)]
        env0, dead0 = dict(self.env), dict(self.dead)
        before = Block(arg_types=[t.xdsl for t in ctypes])
        with ImplicitBuilder(before):
            for n, a, t in zip(names, before.args, ctypes):
                self.bind(n, Value(a, t))
            self.mark_truth_test(st.test)
            c = self.ev(st.test)
            if isinstance(c, (bool, int)):
                raise self.err("while loops need a traced condition; constant conditions (e.g. 'while True' "
                               "with break) are unsupported", st.test, "while")
            c = self.condition(c, st.test)
            scf.ConditionOp(c.ssa, *before.args).location = self.loc(st)
        self.env, self.dead = dict(env0), dict(dead0)
        after = Block(arg_types=[t.xdsl for t in ctypes])
        with ImplicitBuilder(after):
            run_body(None, [Value(a, t) for a, t in zip(after.args, ctypes)])
            self.ctx.loc = self.loc(st)
            outs = [self.coerce_carried(n, t, st) for n, t in zip(names, ctypes)]
            scf.YieldOp(*outs).location = self.ctx.loc
        body_env = self.env
        self.env, self.dead = env0, {**dead0, **self.dead}
        op = scf.WhileOp(inits, [t.xdsl for t in ctypes], Region(before), Region(after))
        op.location = self.loc(st)
        for n, t, r in zip(names, ctypes, op.results):
            self.bind(n, Value(r, t))
        self._scope_end(st, body_env, env0, None, "while loop")

