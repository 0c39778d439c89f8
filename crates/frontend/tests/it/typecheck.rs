//! The type checker (`moss_frontend::typecheck`): for each rule a small legal model that is
//! accepted and an illegal one rejected with the exact message, location and advice.

use crate::common;
use common::*;

fn error_of(name: &str, text: &str) -> String {
    rejection_of(name, text)
}

/// The message, the location and the help of an illegal model's first error.
fn assert_rejected(name: &str, text: &str, message: &str, location: &str, help: &str) {
    let e = error_of(name, text);
    let first = e.lines().next().unwrap_or("");
    assert_eq!(first, format!("error: {message}"), "{e}");
    assert!(e.contains(&format!("--> {name}.mo:{location}\n")), "{e}");
    assert!(e.contains(&format!("= help: {help}")), "{e}");
}

fn assert_accepted(name: &str, text: &str) {
    if let Err(e) = flat_text(name, text) {
        panic!("`{name}` was rejected:\n{e}");
    }
}

#[test]
fn conditions_are_boolean() {
    assert_accepted(
        "CondOk",
        "model CondOk\n  Real x;\n  parameter Integer i = 1;\nequation\n  if i <> 0 then\n    x = 3.0;\n  else\n    x = 2.0;\n  end if;\nend CondOk;\n",
    );
    assert_rejected(
        "CondEq",
        "model CondEq\n  Real x;\n  parameter Integer i = 1;\nequation\n  if i then\n    x = 3.0;\n  else\n    x = 2.0;\n  end if;\nend CondEq;\n",
        "the condition of an if-equation must be a Boolean, but `i` is of type Integer",
        "5:3",
        "compare the value with something, e.g. `i <> 0`",
    );
    assert_rejected(
        "CondWhile",
        "model CondWhile\n  Real x;\n  parameter Integer i = 1;\nalgorithm\n  x := 0;\n  while i loop\n    x := 3.0;\n    break;\n  end while;\nend CondWhile;\n",
        "the condition of an while-statement must be a Boolean, but `i` is of type Integer",
        "6:3",
        "compare the value with something, e.g. `i <> 0`",
    );
}

#[test]
fn enumeration_values_are_not_numbers() {
    assert_accepted(
        "EnumOk",
        "model EnumOk\n  type E = enumeration(one, two, three);\n  parameter E e = E.two;\n  parameter Integer a = Integer(E.three);\n  parameter Real b = if e == E.two then 1 else 2;\nend EnumOk;\n",
    );
    assert_rejected(
        "EnumToInt",
        "model EnumToInt\n  type E = enumeration(one, two, three);\n  parameter Integer a = E.three;\nend EnumToInt;\n",
        "`a` is of type Integer but its binding `'EnumToInt.E'.three` is of type enumeration `EnumToInt.E`",
        "3:21",
        "convert the enumeration value with `Integer(e)`",
    );
    assert_rejected(
        "IntToEnum",
        "model IntToEnum\n  type E = enumeration(one, two, three);\n  parameter E e = 1;\nend IntToEnum;\n",
        "`e` is of type enumeration `IntToEnum.E` but its binding `1` is of type Integer",
        "3:15",
        "use a literal of `IntToEnum.E`, or convert the number with `IntToEnum.E(i)`",
    );
    assert_rejected(
        "OtherEnum",
        "model OtherEnum\n  type E = enumeration(one, two);\n  type F = enumeration(one, two);\n  parameter E e = F.one;\nend OtherEnum;\n",
        "`e` is of type enumeration `OtherEnum.E` but its binding `'OtherEnum.F'.one` is of type enumeration `OtherEnum.F`",
        "4:15",
        "use a literal of `OtherEnum.E`",
    );
    assert_rejected(
        "EnumCompare",
        "model EnumCompare\n  type E = enumeration(one, two, three);\n  parameter Real a = if E.three == 0 then 1 else 2;\nend EnumCompare;\n",
        "`==` compares enumeration `EnumCompare.E` with Integer",
        "3:18",
        "compare an enumeration only with literals of the same enumeration, or convert it with `Integer(e)`",
    );
    assert_rejected(
        "EnumEquation",
        "model EnumEquation\n  type E = enumeration(one, two);\n  E y;\nequation\n  y = 1;\nend EnumEquation;\n",
        "the two sides of the equation `y = 1` have types enumeration `EnumEquation.E` and Integer",
        "5:3",
        "use a literal of `EnumEquation.E`, or convert the number with `EnumEquation.E(i)`",
    );
}

#[test]
fn arithmetic_needs_numbers() {
    assert_accepted(
        "ArithOk",
        "model ArithOk\n  Real t;\n  String s = \"a\" + \"b\";\nequation\n  t = 2.0 * (if terminal() then 1 else 0);\nend ArithOk;\n",
    );
    assert_rejected(
        "ArithBool",
        "model ArithBool\n  Real t;\nequation\n  t = 2.0 * terminal();\nend ArithBool;\n",
        "`*` is not defined for Boolean operands",
        "4:3",
        "use `if b then 1 else 0` to turn a Boolean into a number",
    );
}

#[test]
fn division_and_power_give_reals() {
    assert_accepted(
        "DivOk",
        "model DivOk\n  constant Integer i = div(4000, 100);\n  constant Real r = 4000 / 100 + 8 ^ 3;\nend DivOk;\n",
    );
    assert_rejected(
        "DivInt",
        "model DivInt\n  constant Integer i = 4000 / 100;\nend DivInt;\n",
        "`i` is of type Integer but its binding `40.0` is of type Real",
        "2:20",
        "a Real value is not converted to Integer implicitly: use `integer(x)` (or `div(a, b)` for Integer division)",
    );
}

#[test]
fn builtin_operator_arguments() {
    assert_accepted(
        "BuiltinsOk",
        "model BuiltinsOk\n  Real x(start = 1, fixed = true), y, z;\n  parameter Real d = 0.1;\n  Integer n(start = 0, fixed = true);\nequation\n  der(x) = -abs(x);\n  y = delay(x, d);\n  z = delay(x, y, 1.0);\n  when sample(d, 0.1) then\n    n = pre(n) + 1;\n  end when;\nend BuiltinsOk;\n",
    );
    assert_rejected(
        "AbsBool",
        "model AbsBool\n  Boolean b;\nequation\n  b = abs(b);\nend AbsBool;\n",
        "`abs` needs a Real or Integer argument, but the argument is of type Boolean",
        "4:3",
        "pass a numeric value (for a Boolean, `if b then 1 else 0`)",
    );
    assert_rejected(
        "DerInt",
        "model DerInt\n  constant Integer p = 1;\n  Real a = der(p);\nend DerInt;\n",
        "`der` needs a Real argument, not Integer",
        "3:12",
        "only Real expressions have a time derivative; declare the variable Real",
    );
    assert_rejected(
        "DelayMax",
        "model DelayMax\n  Real x, y;\n  Real b = 2.0;\nequation\n  x = sin(time);\n  y = delay(x, 1.0, b);\nend DelayMax;\n",
        "the delayMax argument of `delay`, `b`, must be a parameter expression",
        "6:3",
        "use a parameter or constant for the largest delay (`delay(x, d, dMax)` with a parameter `dMax`)",
    );
    assert_rejected(
        "DelayOrder",
        "model DelayOrder\n  Real y;\nequation\n  y = delay(sin(time), 5.5, 1.0);\nend DelayOrder;\n",
        "`delay` needs 0 <= delayTime <= delayMax, but delayTime is 5.5 and delayMax is `1.0`",
        "4:3",
        "make delayMax at least as large as the delay time",
    );
    assert_rejected(
        "SampleStart",
        "model SampleStart\n  Integer i(start = 0, fixed = true);\nequation\n  when sample(time, 0.1) then\n    i = pre(i) + 1;\n  end when;\nend SampleStart;\n",
        "the start of `sample`, `time`, must be a parameter expression",
        "4:3",
        "`sample(start, interval)` fixes its event times before the simulation: use parameters or constants",
    );
}

#[test]
fn discrete_time_variables() {
    assert_accepted(
        "DiscreteOk",
        "model DiscreteOk\n  Real x = time;\n  Integer k = integer(x);\n  Boolean b = x > 0.5;\n  discrete Real d(start = 0, fixed = true);\n  discrete Real e = 2 * d;\nequation\n  when sample(0, 0.1) then\n    d = x;\n  end when;\nend DiscreteOk;\n",
    );
    assert_rejected(
        "ContinuousInt",
        "model ContinuousInt\n  function f\n    input Real x;\n    output Integer y;\n  algorithm\n    y := integer(x);\n  end f;\n  Real x = time;\n  Integer y = f(x);\nend ContinuousInt;\n",
        "Integer variable `y` is discrete-time, but `'ContinuousInt.f'(x)` is a continuous-time expression",
        "9:15",
        "a discrete-time variable only changes at events: compute it inside `when`, or from discrete-time values (relations, `integer(x)`, `pre(...)`)",
    );
    assert_rejected(
        "DiscreteConst",
        "model DiscreteConst\n  discrete Real x = 1.0;\nend DiscreteConst;\n",
        "`x` is declared `discrete` but is given the constant value `1.0` outside a when-clause",
        "2:21",
        "assign a discrete Real inside `when`, or declare it as a parameter",
    );
    assert_rejected(
        "DerDiscrete",
        "model DerDiscrete\n  discrete Real p(start = 1, fixed = true);\n  Real a = der(p);\nequation\n  when time > 0.5 then\n    p = 2;\n  end when;\nend DerDiscrete;\n",
        "`der` is applied to `p`, a discrete-time variable",
        "3:12",
        "a discrete-time variable changes only at events and has no derivative; remove `discrete` or the `der`",
    );
}

#[test]
fn if_equations_with_varying_conditions_keep_their_size() {
    assert_accepted(
        "IfCountOk",
        "model IfCountOk\n  Real x, y;\n  parameter Boolean p = true;\nequation\n  if time < 1.0 then\n    x = time;\n  else\n    x = 1.0;\n  end if;\n  if p then\n    y = 1;\n  end if;\nend IfCountOk;\n",
    );
    assert_rejected(
        "IfCount",
        "model IfCount\n  Real x(start = 0.0), y(start = 2.0);\nequation\n  if x < 1.0 then\n    x = time;\n    y = y + x;\n  else\n    x = 1.0;\n  end if;\nend IfCount;\n",
        "branch 1 of this if-equation has 2 equation(s), but the else branch has 1",
        "4:3",
        "give every branch (including `else`) the same number of equations",
    );
}

#[test]
fn functions_do_not_see_time() {
    assert_rejected(
        "TimeInFunction",
        "model TimeInFunction\n  function f\n    output Real t;\n  algorithm\n    t := time;\n  end f;\n  Real x = f();\nend TimeInFunction;\n",
        "function `TimeInFunction.f` uses `time`",
        "2:12",
        "a function only sees its inputs: pass `time` as an input argument",
    );
}

#[test]
fn structural_rules() {
    assert_accepted(
        "StructOk",
        "model StructOk\n  function f\n    input Real x;\n    output Real a;\n    output Real b;\n  algorithm\n    a := x;\n    b := 2 * x;\n  end f;\n  Real x[2, 2], y, z;\n  Real m[2, 2] = {{1, 2}, {3, 4}} ^ 2;\nequation\n  for k in {1, 2} loop\n    x[k, :] = {k, k};\n  end for;\n  (y, z) = f(time);\nend StructOk;\n",
    );
    assert_rejected(
        "ForMatrix",
        "model ForMatrix\n  Real x[4, 2];\nequation\n  for e in {{1, 2}, {3, 4}, {5, 6}, {7, 8}} loop\n    x[div(e[2], 2), :] = e;\n  end for;\nend ForMatrix;\n",
        "the range of a for-loop must be a vector, but this one is an array of 4 vectors",
        "4:12",
        "iterate over the rows by index instead: `for i in 1:size(a, 1) loop ... a[i, :] ...`",
    );
    assert_rejected(
        "TupleMore",
        "model TupleMore\n  function f\n    input Real x;\n    output Real a;\n    output Real b;\n  algorithm\n    a := x;\n    b := x;\n  end f;\n  Real x, y, z;\nequation\n  (x, y, z) = f(time);\nend TupleMore;\n",
        "3 targets receive the results of `TupleMore.f`, which has only 2 output(s)",
        "12:15",
        "remove the extra targets on the left, or use a function with more outputs",
    );
    assert_rejected(
        "VectorMulti",
        "model VectorMulti\n  function f\n    input Integer i;\n    output Integer a;\n    output Integer b;\n  algorithm\n    a := i;\n    b := i;\n  end f;\n  Integer[2] r1, r2;\nequation\n  (r1, r2) = f({1, 2});\nend VectorMulti;\n",
        "`VectorMulti.f` has 2 outputs and cannot be applied element-wise to the array argument `{1, 2}`",
        "12:16",
        "only functions with one output are vectorized: call it in a for-loop, one element at a time",
    );
    assert_rejected(
        "PowReal",
        "model PowReal\n  Real e[2, 2];\nequation\n  e = {{1, 2}, {1, 2}} ^ 2.3;\nend PowReal;\n",
        "the exponent of an array power `A ^ k` must be an Integer",
        "4:7",
        "`^` on a square matrix is repeated matrix multiplication; for element-wise powers write `A .^ x`",
    );
}

/// An implicit iterator over a Boolean or enumeration dimension runs over `false, true` or
/// the literals (spec 11.2.2.2), so the equations it gives are well typed.
#[test]
fn implicit_iterator_over_typed_dimensions() {
    let m = flat_text(
        "ImplicitTyped",
        "model ImplicitTyped\n  type E = enumeration(one, two);\n  Boolean b[Boolean];\n  E e[E];\nequation\n  for i loop\n    b[i] = i;\n  end for;\n  for j loop\n    e[j] = j;\n  end for;\nend ImplicitTyped;\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        equations(&m),
        vec![
            "'b[1]' = false;",
            "'b[2]' = true;",
            "'e[1]' = 'ImplicitTyped.E'.one;",
            "'e[2]' = 'ImplicitTyped.E'.two;",
        ]
    );
}

#[test]
fn a_call_without_outputs_has_no_value() {
    assert_accepted(
        "NoOutputOk",
        "model NoOutputOk\n  function f\n    input Real x;\n    output Real y;\n  algorithm\n    y := x;\n  end f;\n  Real i = f(100);\nend NoOutputOk;\n",
    );
    assert_rejected(
        "NoOutput",
        "model NoOutput\n  function g\n  end g;\n  function f\n    extends g;\n    input Integer x;\n  end f;\n  Integer i = f(100);\nend NoOutput;\n",
        "`NoOutput.f` has no outputs, so its call has no value",
        "8:15",
        "declare an output in the function, or call it on its own as `f(x);`",
    );
}
