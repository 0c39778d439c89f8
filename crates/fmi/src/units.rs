//! Display units: how a `displayUnit` of the model relates to its `unit`, for the
//! `<DisplayUnit factor offset>` elements of modelDescription.xml (FMI: display value =
//! factor * value + offset).
//!
//! Only conversions known here are declared; a variable whose display unit is not among
//! them (or is its unit) gets no `displayUnit` attribute, so importers show the unit itself
//! rather than a wrong scale.

use std::f64::consts::PI;

/// `(unit, display unit, factor, offset)`, the conversions the MSL's types use.
const CONVERSIONS: &[(&str, &str, f64, f64)] = &[
    ("rad", "deg", 180.0 / PI, 0.0),
    ("rad/s", "rpm", 30.0 / PI, 0.0),
    ("rad/s", "deg/s", 180.0 / PI, 0.0),
    ("rad/s2", "deg/s2", 180.0 / PI, 0.0),
    ("K", "degC", 1.0, -273.15),
    ("Pa", "bar", 1e-5, 0.0),
    ("Pa", "kPa", 1e-3, 0.0),
    ("Pa", "MPa", 1e-6, 0.0),
    ("kg/m3", "g/cm3", 1e-3, 0.0),
    ("m", "mm", 1e3, 0.0),
    ("m", "cm", 1e2, 0.0),
    ("m", "km", 1e-3, 0.0),
    ("m/s", "km/h", 3.6, 0.0),
    ("s", "ms", 1e3, 0.0),
    ("s", "min", 1.0 / 60.0, 0.0),
    ("s", "h", 1.0 / 3600.0, 0.0),
    ("s", "d", 1.0 / 86400.0, 0.0),
    ("W", "kW", 1e-3, 0.0),
    ("W", "MW", 1e-6, 0.0),
    ("J", "kJ", 1e-3, 0.0),
    ("J", "kWh", 1.0 / 3.6e6, 0.0),
    ("N", "kN", 1e-3, 0.0),
    ("N.m", "kN.m", 1e-3, 0.0),
    ("kg", "g", 1e3, 0.0),
    ("kg", "t", 1e-3, 0.0),
    ("m3", "l", 1e3, 0.0),
    ("m3/s", "l/min", 6e4, 0.0),
    ("m3/s", "l/s", 1e3, 0.0),
    ("V", "kV", 1e-3, 0.0),
    ("V", "mV", 1e3, 0.0),
    ("A", "mA", 1e3, 0.0),
    ("A", "kA", 1e-3, 0.0),
    ("Hz", "kHz", 1e-3, 0.0),
];

/// `(factor, offset)` that turns a value in `unit` into `display_unit`, if known.
pub fn conversion(unit: &str, display_unit: &str) -> Option<(f64, f64)> {
    CONVERSIONS
        .iter()
        .find(|(u, d, _, _)| *u == unit && *d == display_unit)
        .map(|&(_, _, f, o)| (f, o))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_conversions() {
        let (f, o) = conversion("K", "degC").expect("known");
        assert!((f * 300.0 + o - 26.85).abs() < 1e-12);
        let (f, _) = conversion("rad/s", "rpm").expect("known");
        assert!((f * 2.0 * PI - 60.0).abs() < 1e-12);
        assert_eq!(conversion("m", "furlong"), None);
        assert_eq!(conversion("deg", "rad"), None);
    }
}
