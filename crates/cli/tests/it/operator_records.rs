//! Operator records (spec chapter 14) and record values inside function bodies (spec 12.6):
//! a small complex-number operator record written here, used through its operators and
//! constructors in equations and in functions (record-valued expressions, arrays of
//! records as arguments, array constructors of records, element-wise application of a
//! function to an array of records, if-expressions choosing records, elements of a record
//! array assigned in a loop and returned), compared with the closed forms. Also record
//! arrays bound as a whole by an array constructor choosing between records whose array
//! fields differ in size.

use crate::library_support;

use library_support::{assert_close, simulate_source};

const PHASORS: &str = r#"
package Phasors
  operator record Cx "complex number"
    Real re;
    Real im;
    encapsulated operator 'constructor'
      function fromReal
        import Phasors.Cx;
        input Real re;
        input Real im = 0;
        output Cx result(re = re, im = im);
      algorithm
      end fromReal;
    end 'constructor';
    encapsulated operator function '+'
      import Phasors.Cx;
      input Cx a;
      input Cx b;
      output Cx c;
    algorithm
      c := Cx(a.re + b.re, a.im + b.im);
    end '+';
    encapsulated operator '-'
      function negate
        import Phasors.Cx;
        input Cx a;
        output Cx c;
      algorithm
        c := Cx(-a.re, -a.im);
      end negate;
      function subtract
        import Phasors.Cx;
        input Cx a;
        input Cx b;
        output Cx c;
      algorithm
        c := Cx(a.re - b.re, a.im - b.im);
      end subtract;
    end '-';
    encapsulated operator '*'
      function multiply
        import Phasors.Cx;
        input Cx a;
        input Cx b;
        output Cx c;
      algorithm
        c := Cx(a.re*b.re - a.im*b.im, a.re*b.im + a.im*b.re);
      end multiply;
    end '*';
    encapsulated operator function '/'
      import Phasors.Cx;
      import Phasors.conjugate;
      input Cx a;
      input Cx b;
      output Cx c;
    protected
      Real d = b.re^2 + b.im^2;
    algorithm
      // through other operators of the record, and a scalar converted by the constructor
      c := a*conjugate(b)*Cx(1/d);
    end '/';
  end Cx;

  constant Cx j = Cx(0, 1);

  function conjugate
    input Cx a;
    output Cx c;
  algorithm
    c := Cx(a.re, -a.im);
  end conjugate;

  function realPart
    input Cx a;
    output Real r;
  algorithm
    r := a.re;
  end realPart;

  function polar
    input Real len;
    input Real phi;
    output Cx c;
  algorithm
    c := Cx(len*cos(phi), len*sin(phi));
  end polar;

  function total "sum of an array of records"
    input Cx v[:];
    output Cx s;
  algorithm
    s := Cx(0);
    for k in 1:size(v, 1) loop
      s := s + v[k];
    end for;
  end total;

  function power "sum of the real parts of v[k]*conj(i[k])"
    input Cx v[:];
    input Cx i[size(v, 1)];
    output Real p;
  algorithm
    p := sum(realPart({v[k]*conjugate(i[k]) for k in 1:size(v, 1)}));
  end power;

  function roots "the n-th roots of unity, scaled"
    input Integer n;
    input Real scale;
    output Cx z[n];
  algorithm
    for k in 1:n loop
      z[k] := polar(scale, 2*3.141592653589793*(k - 1)/n);
    end for;
  end roots;

  function pick
    input Boolean first;
    input Cx a;
    output Cx c;
  algorithm
    c := if first then -a else a*j;
  end pick;

  function swapped
    input Cx a;
    output Cx c;
  algorithm
    c := a;
    c := Cx(c.im, c.re);
  end swapped;

end Phasors;

model UsePhasors
  import Phasors.*;
  parameter Integer n = 3;
  parameter Cx w[n] = roots(n, 2);
  Cx u = Cx(time, 1);
  Cx q = u/Cx(0, 2);
  Cx s = total({u, 2*u, Cx(1)});
  Real p = power({u, u}, {Cx(2), j});
  Cx a = pick(time > 0.5, u);
  Cx b = swapped(u);
  Cx wt = total(w);
  Real wsum = wt.re;
  Real w2 = w[2].im;
end UsePhasors;
"#;

#[test]
fn operator_records_in_equations_and_function_bodies() {
    let run = simulate_source("UsePhasors", PHASORS, &["--stop-time", "1"]);
    for (i, &t) in run.time().iter().enumerate().step_by(50) {
        let at = |name: &str| run.get(name)[i];
        // (t + j)/(2j) = (1 - j t)/2
        assert_close("q.re", at("q.re"), 0.5, 1e-9);
        assert_close("q.im", at("q.im"), -t / 2.0, 1e-9);
        // u + 2u + 1
        assert_close("s.re", at("s.re"), 3.0 * t + 1.0, 1e-9);
        assert_close("s.im", at("s.im"), 3.0, 1e-9);
        // re((t + j)*2) + re((t + j)*conj(j)) = 2t + 1
        assert_close("p", at("p"), 2.0 * t + 1.0, 1e-9);
        assert_close("b.re", at("b.re"), 1.0, 1e-9);
        assert_close("b.im", at("b.im"), t, 1e-9);
        // the roots of unity sum to zero; w[2] = 2 exp(2 pi j/3)
        assert_close("wsum", at("wsum"), 0.0, 1e-9);
        assert_close(
            "w2",
            at("w2"),
            2.0 * (2.0 * std::f64::consts::PI / 3.0).sin(),
            1e-9,
        );
    }
    // u*j = (-1 + j t) before t = 0.5, -u after
    assert_close("a.re early", run.at("a.re", 0.2), -1.0, 1e-9);
    assert_close("a.im early", run.at("a.im", 0.2), 0.2, 1e-9);
    assert_close("a.re late", run.at("a.re", 0.8), -0.8, 1e-9);
    assert_close("a.im late", run.at("a.im", 0.8), -1.0, 1e-9);
}

const STACK: &str = r#"
model Stack
  record Cell
    parameter Real table[:] = {1, 2};
    parameter Real q = 1;
  end Cell;
  record StackData
    parameter Integer n = 3;
    parameter Integer worn = 2;
    parameter Cell good;
    parameter Cell used;
    parameter Cell cells[n] = {if i == worn then used else good for i in 1:n};
  end StackData;
  model User
    parameter StackData d;
    Real y = sum(d.cells[2].table)*d.cells[1].q*time;
    Real z = size(d.cells[3].table, 1);
  end User;
  parameter StackData data(good(table = {1, 2, 3, 4}, q = 2), used(table = {4, 5, 6}, q = 0.5));
  User u(d = data);
end Stack;
"#;

#[test]
fn record_arrays_bound_as_a_whole_take_field_sizes_from_the_binding() {
    let run = simulate_source("Stack", STACK, &["--stop-time", "1"]);
    // cells[2] is the used cell (3 entries), cells[1] and cells[3] the good one (4 entries)
    assert_close("u.y", run.last("u.y"), 15.0 * 2.0, 1e-9);
    assert_close("u.z", run.last("u.z"), 4.0, 1e-12);
}

const ORIENTATION: &str = r#"
package Frames3
  record Orientation "a scalar record whose fields are arrays"
    Real T[3, 3];
    Real w[3];
  end Orientation;
  function fromRows
    input Real ex[3];
    input Real ey[3];
    output Orientation R;
  algorithm
    R := Orientation(T = {ex, ey, cross(ex, ey)}, w = {0.5, 0.25, 0.125});
  end fromRows;
  function resolveDyade1
    input Orientation R;
    input Real D2[3, 3];
    output Real D1[3, 3];
  algorithm
    D1 := transpose(R.T) * D2 * R.T;
  end resolveDyade1;
end Frames3;

model Rotated
  parameter Frames3.Orientation R = Frames3.fromRows({0, 1, 0}, {-1, 0, 0});
  parameter Real I[3, 3] = Frames3.resolveDyade1(R, diagonal({1, 2, 3}));
  Real x(start = 1);
equation
  der(x) = -x;
end Rotated;
"#;

#[test]
fn scalar_record_results_with_matrix_fields_keep_their_shape() {
    let source = format!("{ORIENTATION}\n");
    let run = simulate_source("Rotated", &source, &["--stop-time", "0.1"]);
    // T = {{0,1,0},{-1,0,0},{0,0,1}}: a quarter turn about z swaps the first two
    // principal moments of inertia.
    for (name, want) in [
        ("R.T[1,2]", 1.0),
        ("R.T[2,1]", -1.0),
        ("R.T[1,1]", 0.0),
        ("R.T[3,3]", 1.0),
        ("R.w[1]", 0.5),
        ("R.w[3]", 0.125),
        ("I[1,1]", 2.0),
        ("I[2,2]", 1.0),
        ("I[3,3]", 3.0),
        ("I[1,2]", 0.0),
    ] {
        assert_close(name, run.last(name), want, 1e-12);
    }
}
