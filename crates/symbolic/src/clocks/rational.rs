//! Exact rational numbers for clock factors: sub-, super- and shift-sampling relate the ticks
//! of sub-partitions by rational factors (spec 16.5.2), which must stay exact so that ticks
//! that coincide in the specification coincide in the simulation.

use std::fmt;
use std::ops::{Add, Div, Mul, Neg, Sub};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rational {
    num: i64,
    den: i64,
}

fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

pub fn lcm(a: i64, b: i64) -> i64 {
    if a == 0 || b == 0 {
        return a.max(b);
    }
    (a / gcd(a, b) * b).abs()
}

impl Rational {
    pub const ZERO: Rational = Rational { num: 0, den: 1 };
    pub const ONE: Rational = Rational { num: 1, den: 1 };

    /// `num / den`; `den` must not be zero (callers check user input first).
    pub fn new(num: i64, den: i64) -> Rational {
        debug_assert!(den != 0);
        let g = gcd(num, den).max(1);
        let s = if den < 0 { -1 } else { 1 };
        Rational {
            num: s * num / g,
            den: s * den / g,
        }
    }

    pub fn int(n: i64) -> Rational {
        Rational { num: n, den: 1 }
    }

    pub fn num(self) -> i64 {
        self.num
    }

    pub fn den(self) -> i64 {
        self.den
    }

    pub fn is_integer(self) -> bool {
        self.den == 1
    }

    pub fn to_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }
}

impl Add for Rational {
    type Output = Rational;
    fn add(self, o: Rational) -> Rational {
        Rational::new(self.num * o.den + o.num * self.den, self.den * o.den)
    }
}

impl Sub for Rational {
    type Output = Rational;
    fn sub(self, o: Rational) -> Rational {
        self + (-o)
    }
}

impl Neg for Rational {
    type Output = Rational;
    fn neg(self) -> Rational {
        Rational {
            num: -self.num,
            den: self.den,
        }
    }
}

impl Mul for Rational {
    type Output = Rational;
    fn mul(self, o: Rational) -> Rational {
        Rational::new(self.num * o.num, self.den * o.den)
    }
}

impl Div for Rational {
    type Output = Rational;
    fn div(self, o: Rational) -> Rational {
        Rational::new(self.num * o.den, self.den * o.num)
    }
}

impl fmt::Display for Rational {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.den == 1 {
            write!(f, "{}", self.num)
        } else {
            write!(f, "{}/{}", self.num, self.den)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_stays_normalized() {
        let a = Rational::new(2, 4);
        assert_eq!(a, Rational::new(1, 2));
        assert_eq!(a + Rational::new(1, 3), Rational::new(5, 6));
        assert_eq!(a * Rational::int(4), Rational::int(2));
        assert_eq!(Rational::int(3) / Rational::int(-6), Rational::new(-1, 2));
        assert_eq!(lcm(4, 6), 12);
        assert!((Rational::new(3, 4) - Rational::new(1, 4)).to_f64() == 0.5);
    }
}
