//! Rules of the specification added for the compliance verdicts: each with a legal model that
//! is accepted (with its values checked where it computes some) and an illegal one rejected
//! with the exact message and location.

use crate::common;
use common::*;

fn error_of(name: &str, text: &str) -> String {
    rejection_of(name, text)
}

/// The first error's message and location (`line:col`).
fn assert_rejected(name: &str, text: &str, message: &str, location: &str) {
    let e = error_of(name, text);
    let first = e.lines().next().unwrap_or("");
    assert_eq!(first, format!("error: {message}"), "{e}");
    assert!(e.contains(&format!("--> {name}.mo:{location}\n")), "{e}");
}

fn accepted(name: &str, text: &str) -> Vec<String> {
    match flat_text(name, text) {
        Ok(m) => equations(&m),
        Err(e) => panic!("`{name}` was rejected:\n{e}"),
    }
}

#[test]
fn time_is_not_available_in_records_and_connectors() {
    // Bound where the record is used: legal.
    accepted(
        "TimeOk",
        "model TimeOk\n  record R\n    Real x;\n  end R;\n  R r(x = time);\nend TimeOk;\n",
    );
    assert_rejected(
        "TimeRec",
        "model TimeRec\n  record R\n    Real x = time;\n  end R;\n  R r;\nend TimeRec;\n",
        "`time` cannot be used in record `TimeRec.R`: it is a built-in variable of models and blocks only (spec 3.6.7); bind the component to `time` where the record is used instead",
        "3:14",
    );
    assert_rejected(
        "TimeCon",
        "model TimeCon\n  connector C\n    Real e = 2 * time;\n    flow Real f;\n  end C;\n  C c;\nend TimeCon;\n",
        "`time` cannot be used in connector `TimeCon.C`: it is a built-in variable of models and blocks only (spec 3.6.7); bind the component to `time` where the connector is used instead",
        "3:18",
    );
}

#[test]
fn typed_dimensions_are_indexed_by_their_type() {
    let eqs = accepted(
        "TypedIdxOk",
        "model TypedIdxOk\n  type E = enumeration(one, two);\n  parameter Real a[E] = {1.5, 2.5};\n  Real b[Boolean];\n  Real y = a[E.two];\nequation\n  b[false] = 1;\n  b[true] = 2;\nend TypedIdxOk;\n",
    );
    assert_eq!(eqs, vec!["y = 'a[2]';", "'b[1]' = 1;", "'b[2]' = 2;"]);
    assert_rejected(
        "EnumIdx",
        "model EnumIdx\n  type E = enumeration(one, two);\n  parameter Real a[E] = {1.5, 2.5};\n  Real y = a[2];\nend EnumIdx;\n",
        "dimension 1 is declared by the type enumeration `EnumIdx.E` and must be indexed by its values, not by the Integer 2 (spec 10.5.1)",
        "4:14",
    );
    assert_rejected(
        "BoolIdx",
        "model BoolIdx\n  Real b[Boolean];\nequation\n  b[1] = 1;\n  b[true] = 2;\nend BoolIdx;\n",
        "dimension 1 is declared by the type Boolean and must be indexed by its values, not by the Integer 1 (spec 10.5.1)",
        "4:5",
    );
}

#[test]
fn array_bindings_have_the_declared_shape() {
    let eqs = accepted(
        "ShapeOk",
        "model ShapeOk\n  Real x[:, 2] = [2, 3];\nend ShapeOk;\n",
    );
    assert_eq!(eqs, vec!["'x[1,1]' = 2;", "'x[1,2]' = 3;"]);
    assert_rejected(
        "ShapeBad",
        "model ShapeBad\n  Real x[:, 1] = [2, 3];\nend ShapeBad;\n",
        "the binding of `x` has size [1, 2] but `x` is declared with size [1, 1]",
        "2:18",
    );
}

#[test]
fn cat_along_a_third_dimension_and_matrix_of_three_dimensions() {
    let eqs = accepted(
        "Cat3",
        "model Cat3\n  Real a[1, 2, 1] = {{{1}, {2}}};\n  Real b[1, 2, 2] = {{{3, 4}, {5, 6}}};\n  Real c[1, 2, 3] = cat(3, a, b);\n  Real m[1, 2] = matrix(a);\nend Cat3;\n",
    );
    for want in [
        "'c[1,1,1]' = 'a[1,1,1]';",
        "'c[1,1,2]' = 'b[1,1,1]';",
        "'c[1,1,3]' = 'b[1,1,2]';",
        "'c[1,2,1]' = 'a[1,2,1]';",
        "'c[1,2,2]' = 'b[1,2,1]';",
        "'c[1,2,3]' = 'b[1,2,2]';",
        "'m[1,1]' = 'a[1,1,1]';",
        "'m[1,2]' = 'a[1,2,1]';",
    ] {
        assert!(eqs.iter().any(|e| e == want), "{want} not in {eqs:?}");
    }
    assert_rejected(
        "MatrixBad",
        "model MatrixBad\n  Real a[1, 1, 2] = {{{1, 2}}};\n  Real m[1, 1] = matrix(a);\nend MatrixBad;\n",
        "matrix(A) needs size(A, k) = 1 for every dimension k > 2",
        "3:18",
    );
}

#[test]
fn constraining_type_has_the_dimensions_of_the_type_part() {
    accepted(
        "RankOk",
        "model RankOk\n  type Real3 = Real[3];\n  replaceable Real3 x[2] = {{1, 2, 3}, {4, 5, 6}} constrainedby Real3;\n  replaceable type T = Real3[2] constrainedby Real3;\n  T y = x;\nend RankOk;\n",
    );
    assert_rejected(
        "RankComp",
        "model RankComp\n  type Real3 = Real[3];\n  type Real23 = Real[2, 3];\n  replaceable Real3 x[2] = {{1, 2, 3}, {4, 5, 6}} constrainedby Real23;\nend RankComp;\n",
        "`RankComp.Real3` has 1 array dimension(s) but its constraining type `RankComp.Real23` has 2",
        "4:15",
    );
    assert_rejected(
        "RankClass",
        "model RankClass\n  type Real3 = Real[3];\n  type Real23 = Real[2, 3];\n  replaceable type T = Real3[2] constrainedby Real23;\n  T x = {{1, 2, 3}, {4, 5, 6}};\nend RankClass;\n",
        "`RankClass.Real3` has 1 array dimension(s) but its constraining type `RankClass.Real23` has 2",
        "4:24",
    );
}

#[test]
fn class_redeclaration_meets_the_constraint_of_the_one_it_replaces() {
    let base = "  model A\n    Real x = 1;\n  end A;\n  model B\n    Real x = 2;\n    Real y = 3;\n  end B;\n  model C\n    replaceable model X = A;\n    X inst;\n  end C;\n  model D\n    extends C(replaceable model X = B constrainedby B);\n  end D;\n";
    accepted(
        "RedeclOk",
        &format!("model RedeclOk\n{base}  model E\n    extends D(redeclare model X = B);\n  end E;\n  E e;\nend RedeclOk;\n"),
    );
    assert_rejected(
        "RedeclBad",
        &format!("model RedeclBad\n{base}  model E\n    extends D(redeclare model X = A);\n  end E;\n  E e;\nend RedeclBad;\n"),
        "`RedeclBad.E.X` is not a subtype of `RedeclBad.B`: it has no element `y`",
        "17:31",
    );
}

/// An operator record `R` whose `'constructor'` operator holds `functions` and which has a
/// `'String'` operator function returning `string_out`; `R r = R(1)` and `String(r)` used.
fn operator_record(name: &str, functions: &str, string_out: &str) -> String {
    format!(
        "model {name}\n  encapsulated package P\n    operator record R\n      Integer re;\n      Integer im;\n      encapsulated operator 'constructor'\n        import {name}.P.R;\n{functions}      end 'constructor';\n      encapsulated operator function 'String'\n        import {name}.P.R;\n        input R a;\n        output {string_out} s;\n      algorithm\n      end 'String';\n    end R;\n  end P;\n  P.R r = P.R(1);\n  String s = String(r);\nend {name};\n"
    )
}

const FROM_INT: &str = "        function fromInt\n          input Integer i;\n          output R o(re = i, im = 0);\n        algorithm\n        end fromInt;\n";

#[test]
fn operator_functions_have_one_output_and_no_twin() {
    let two = "        function fromTwo\n          input Integer i;\n          input Integer j;\n          output R o(re = i, im = j);\n        algorithm\n        end fromTwo;\n";
    accepted(
        "OpOk",
        &operator_record("OpOk", &format!("{FROM_INT}{two}"), "String"),
    );
    let twin = "        function fromInt2\n          input Integer k;\n          output R o(re = 1, im = k);\n        algorithm\n        end fromInt2;\n";
    assert_rejected(
        "OpTwin",
        &operator_record("OpTwin", &format!("{FROM_INT}{twin}"), "String"),
        "functions `fromInt` and `fromInt2` of operator 'constructor' take the same inputs, so a call of the operator is ambiguous",
        "13:18",
    );
    let two_out = "        function fromInt\n          input Integer i;\n          output R o;\n          output R o2;\n        algorithm\n        end fromInt;\n";
    assert_rejected(
        "OpOuts",
        &operator_record("OpOuts", two_out, "String"),
        "function `fromInt` of operator 'constructor' has 2 outputs, but an operator function returns exactly one",
        "8:18",
    );
    assert_rejected(
        "OpString",
        &operator_record("OpString", FROM_INT, "Integer"),
        "the output of function `'String'` of operator 'String' is of type `Integer`, but it must be a String",
        "17:24",
    );
}

#[test]
fn an_import_cannot_be_redeclared() {
    let text = |name: &str, redeclared: &str| {
        format!("model {name}\n  encapsulated package P\n    model A\n      Real x = 2.2;\n    end A;\n  end P;\n  model B\n    import M = {name}.P.A;\n    replaceable model N = P.A;\n    M m;\n    N n;\n  end B;\n  model C\n    Real x = 4.2;\n  end C;\n  B b(redeclare model {redeclared} = C);\nend {name};\n")
    };
    accepted("RedeclN", &text("RedeclN", "N"));
    assert_rejected(
        "RedeclM",
        &text("RedeclM", "M"),
        "redeclaration of `M`, but `RedeclM.B` has no class element `M`",
        "16:23",
    );
}

#[test]
fn when_targets_are_not_inside_model_components() {
    // A record or connector component may be assigned from outside; a model's may not.
    let eqs = accepted(
        "WhenOk",
        "model WhenOk\n  record R\n    Real x;\n  end R;\n  model M\n    discrete Real x(start = 0, fixed = true);\n  equation\n    when sample(0, 1) then\n      x = pre(x) + 1;\n    end when;\n  end M;\n  R r;\n  M m;\nequation\n  when sample(0, 1) then\n    r.x = 2;\n  end when;\nend WhenOk;\n",
    );
    assert!(eqs.iter().any(|e| e.contains("'r.x' = 2")), "{eqs:?}");
    assert_rejected(
        "WhenModel",
        "model WhenModel\n  model M\n    discrete Real x;\n  end M;\n  M m;\nequation\n  when sample(0, 1) then\n    m.x = 1;\n  end when;\nend WhenModel;\n",
        "`m.x` is assigned in a when-clause but is defined in `m`, a component of model class `WhenModel.M`",
        "8:5",
    );
    assert_rejected(
        "WhenBlock",
        "model WhenBlock\n  block B\n    discrete input Real u;\n  end B;\n  B b;\nequation\n  when sample(0, 1) then\n    b.u = 1;\n  end when;\nend WhenBlock;\n",
        "`b.u` is assigned in a when-clause but is defined in `b`, a component of block class `WhenBlock.B`",
        "8:5",
    );
}

#[test]
fn base_class_text_does_not_see_the_extending_class() {
    // The extending class sees the inherited elements, and its extends modifier its own.
    let eqs = accepted(
        "ScopeOk",
        "model ScopeOk\n  model Base\n    Integer z = 1;\n    Integer x;\n  end Base;\n  model Derived\n    Integer y = 2 + z;\n    extends Base(x = y);\n  end Derived;\n  Derived d;\nend ScopeOk;\n",
    );
    assert!(eqs.iter().any(|e| e == "'d.x' = 'd.y';"), "{eqs:?}");
    let e = error_of(
        "ScopeBad",
        "model ScopeBad\n  model Base\n    Integer x = y;\n  end Base;\n  model Derived\n    Integer y = 2;\n    extends Base;\n  end Derived;\n  Derived d;\nend ScopeBad;\n",
    );
    assert!(e.starts_with("error: unknown name `y`"), "{e}");
    assert!(e.contains("--> ScopeBad.mo:3:17\n"), "{e}");
    assert!(e.contains("= help: `y` is declared in a class extending `ScopeBad.Base`; the text of a base class does not see the elements of the classes that extend it (specification 5.3)"), "{e}");
}
