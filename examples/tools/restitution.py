#!/usr/bin/env python3
"""Coefficient of restitution of the ElastoGap contact law (exponent n = 1).

Integrates a single impact of a mass m on an ElastoGap (spring c, damper d) with
gravity g: compression x = s_rel0 - s > 0, upward contact force
    F = c*x - clamp(d*v, -c*x, c*x)
(the damping force is clipped to the spring force, so the contact never pulls).
Returns e = v_out / v_in, where v_in is the speed when contact starts and v_out the
speed when it ends.  Usage: restitution.py [m c d v_in].
"""
import sys


def contact_force(x, v, c, d):
    """Upward force on the ball during contact (x >= 0 compression, v upward speed)."""
    fc = c * x
    fd = min(max(d * v, -fc), fc)
    return fc - fd


def restitution(m, c, d, v_in, g=9.80665, steps_per_period=20000):
    omega = (c / m) ** 0.5
    h = (2 * 3.141592653589793 / omega) / steps_per_period
    x, v, t = 0.0, -v_in, 0.0  # x: compression, v: upward velocity of the ball

    def deriv(x, v):
        # dx/dt = -v (compression grows while the ball moves down)
        return -v, (contact_force(x, v, c, d) - m * g) / m

    while True:
        # classical Runge-Kutta step
        k1 = deriv(x, v)
        k2 = deriv(x + h / 2 * k1[0], v + h / 2 * k1[1])
        k3 = deriv(x + h / 2 * k2[0], v + h / 2 * k2[1])
        k4 = deriv(x + h * k3[0], v + h * k3[1])
        xn = x + h / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        vn = v + h / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
        t += h
        if xn <= 0.0 and t > h:
            # contact ends: interpolate the speed at x = 0
            frac = x / (x - xn)
            return (v + frac * (vn - v)) / v_in, t
        x, v = xn, vn


def main():
    args = [float(a) for a in sys.argv[1:]]
    m, c, d, v_in = args if len(args) == 4 else (0.5, 5.0e4, 10.0, 8.8)
    e, duration = restitution(m, c, d, v_in)
    print(f"m={m} c={c} d={d} v_in={v_in}: e={e:.4f}, contact duration={duration*1000:.2f} ms")
    # the linear spring-damper without clipping would give exp(-zeta*pi/sqrt(1-zeta^2))
    import math
    zeta = d / (2 * math.sqrt(c * m))
    print(f"unclipped linear estimate: {math.exp(-zeta*math.pi/math.sqrt(1-zeta*zeta)):.4f}")


if __name__ == "__main__":
    main()
