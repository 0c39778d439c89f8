//! Water at published IAPWS-IF97 points: region 1 (liquid) written here from the release's
//! tables as Modelica functions (coefficient arrays, loops, integer powers), with its
//! backward equation `T(p, h)` declared as the `inverse` of `h(p, T)`. The release's own
//! verification values (IAPWS-IF97, tables 5 and 7) are the expected results, to the nine
//! digits it prints.

use crate::library_support;

use library_support::{assert_rel, simulate_source};

const IF97: &str = r#"
package IF97Region1 "IAPWS-IF97 region 1: p in MPa, T in K, h in kJ/kg, v in m3/kg"
  constant Real R = 0.461526 "specific gas constant of water, kJ/(kg K)";
  constant Integer I[34] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 8, 8, 21, 23, 29, 30, 31, 32};
  constant Integer J[34] = {-2, -1, 0, 1, 2, 3, 4, 5, -9, -7, -1, 0, 1, 3, -3, 0, 1, 3, 17, -4, 0, 6, -5, -2, 10, -8, -11, -6, -29, -31, -38, -39, -40, -41};
  constant Real n[34] = {
      0.14632971213167, -0.84548187169114, -3.756360367204, 3.3855169168385,
      -0.95791963387872, 0.15772038513228, -0.016616417199501, 0.00081214629983568,
      0.00028319080123804, -0.00060706301565874, -0.018990068218419, -0.032529748770505,
      -0.021841717175414, -5.283835796993e-05, -0.00047184321073267, -0.00030001780793026,
      4.7661393906987e-05, -4.4141845330846e-06, -7.2694996297594e-16, -3.1679644845054e-05,
      -2.8270797985312e-06, -8.5205128120103e-10, -2.2425281908e-06, -6.5171222895601e-07,
      -1.4341729937924e-13, -4.0516996860117e-07, -1.2734301741641e-09, -1.7424871230634e-10,
      -6.8762131295531e-19, 1.4478307828521e-20, 2.6335781662795e-23, -1.1947622640071e-23,
      1.8228094581404e-24, -9.3537087292458e-26};
  constant Integer Ib[20] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 3, 4, 5, 6};
  constant Integer Jb[20] = {0, 1, 2, 6, 22, 32, 0, 1, 2, 3, 4, 10, 32, 10, 32, 10, 32, 32, 32, 32};
  constant Real nb[20] = {
      -238.72489924521, 404.21188637945, 113.49746881718, -5.8457616048039,
      -0.0001528548241314, -1.0866707695377e-06, -13.391744872602, 43.211039183559,
      -54.010067170506, 30.535892203916, -6.5964749423638, 0.0093965400878363,
      1.157364750534e-07, -2.5858641282073e-05, -4.0644363084799e-09, 6.6456186191635e-08,
      8.0670734103027e-11, -9.3477771213947e-13, 5.8265442020601e-15, -1.5020185953503e-17};

  function gammaPi "d gamma/d pi of the dimensionless Gibbs free energy"
    input Real p;
    input Real T;
    output Real g;
  protected
    Real pi = p/16.53;
    Real tau = 1386/T;
  algorithm
    g := 0;
    for i in 1:34 loop
      g := g - n[i]*I[i]*(7.1 - pi)^(I[i] - 1)*(tau - 1.222)^J[i];
    end for;
  end gammaPi;

  function gammaTau "d gamma/d tau"
    input Real p;
    input Real T;
    output Real g;
  protected
    Real pi = p/16.53;
    Real tau = 1386/T;
  algorithm
    g := 0;
    for i in 1:34 loop
      g := g + n[i]*J[i]*(7.1 - pi)^I[i]*(tau - 1.222)^(J[i] - 1);
    end for;
  end gammaTau;

  function gammaTauTau "d2 gamma/d tau2"
    input Real p;
    input Real T;
    output Real g;
  protected
    Real pi = p/16.53;
    Real tau = 1386/T;
  algorithm
    g := 0;
    for i in 1:34 loop
      g := g + n[i]*J[i]*(J[i] - 1)*(7.1 - pi)^I[i]*(tau - 1.222)^(J[i] - 2);
    end for;
  end gammaTauTau;

  function specificVolume
    input Real p;
    input Real T;
    output Real v;
  algorithm
    v := R*T/(1000*p)*(p/16.53)*gammaPi(p, T);
  end specificVolume;

  function specificEnthalpy
    input Real p;
    input Real T;
    output Real h;
  algorithm
    h := R*T*(1386/T)*gammaTau(p, T);
    annotation(inverse(T = temperature_ph(p, h)));
  end specificEnthalpy;

  function heatCapacity
    input Real p;
    input Real T;
    output Real cp;
  algorithm
    cp := -R*(1386/T)^2*gammaTauTau(p, T);
  end heatCapacity;

  function temperature_ph "backward equation T(p, h)"
    input Real p;
    input Real h;
    output Real T;
  protected
    Real eta = h/2500;
  algorithm
    T := 0;
    for i in 1:20 loop
      T := T + nb[i]*p^Ib[i]*(eta + 1)^Jb[i];
    end for;
  end temperature_ph;
end IF97Region1;

model WaterPoints
  import IF97Region1.*;
  parameter Real p[3] = {3, 80, 3};
  parameter Real T[3] = {300, 300, 500};
  Real v[3] = {specificVolume(p[i], T[i]) for i in 1:3};
  Real h[3] = {specificEnthalpy(p[i], T[i]) for i in 1:3};
  Real cp[3] = {heatCapacity(p[i], T[i]) for i in 1:3};
  Real p_b = 3 + 77*time "3 MPa at t = 0, 80 MPa at t = 1";
  Real h_b = 500 + 1000*time "500 kJ/kg at t = 0, 1500 kJ/kg at t = 1";
  Real T_b "from h_b = specificEnthalpy(p_b, T_b): the backward equation";
equation
  h_b = specificEnthalpy(p_b, T_b);
end WaterPoints;
"#;

/// Forward properties at the three verification points of region 1 (table 5 of the
/// release).
#[test]
fn region_1_properties_at_the_published_points() {
    let run = simulate_source("WaterPoints", IF97, &["--stop-time", "1"]);
    let published = [
        ("v[1]", 0.100215168e-2),
        ("v[2]", 0.971180894e-3),
        ("v[3]", 0.120241800e-2),
        ("h[1]", 0.115331273e3),
        ("h[2]", 0.184142828e3),
        ("h[3]", 0.975542239e3),
        ("cp[1]", 0.417301218e1),
        ("cp[2]", 0.401008987e1),
        ("cp[3]", 0.465580682e1),
    ];
    for (name, value) in published {
        assert_rel(name, run.at(name, 0.0), value, 1e-8);
    }
}

/// `h_b = specificEnthalpy(p_b, T_b)` solved for `T_b` through the declared inverse gives
/// the backward equation's values (table 7): 391.798509 K at 3 MPa and 500 kJ/kg, 611.041229
/// K at 80 MPa and 1500 kJ/kg. (Iterating on the forward function instead would give its
/// exact inverse, which differs from the backward equation by up to tens of millikelvin.)
#[test]
fn temperature_from_enthalpy_through_the_declared_inverse() {
    let run = simulate_source("WaterPoints", IF97, &["--stop-time", "1"]);
    assert_rel(
        "T(3 MPa, 500 kJ/kg)",
        run.at("T_b", 0.0),
        0.391798509e3,
        1e-9,
    );
    assert_rel(
        "T(80 MPa, 1500 kJ/kg)",
        run.at("T_b", 1.0),
        0.611041229e3,
        1e-9,
    );
}
