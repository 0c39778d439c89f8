// A mass on a spring with viscous damping: two states, no events.
model DampedOscillator
  parameter Real m = 1 "mass [kg]";
  parameter Real c = 4 "spring stiffness [N/m]";
  parameter Real d = 0.3 "damping coefficient [N.s/m]";
  Real x(start = 1, fixed = true) "position [m]";
  Real v(start = 0, fixed = true) "velocity [m/s]";
equation
  der(x) = v;
  m * der(v) = -c * x - d * v;
end DampedOscillator;
