model Oscillator "A damped mass-spring oscillator, released from x0"
  parameter Real m(unit = "kg") = 1 "mass";
  parameter Real c(unit = "N/m") = 10 "spring constant";
  parameter Real d(unit = "N.s/m") = 0.5 "damping coefficient";
  parameter Real x0(unit = "m") = 1 "initial position";
  Real x(unit = "m", start = x0, fixed = true) "position";
  Real v(unit = "m/s", start = 0, fixed = true) "velocity";
  Real energy(unit = "J") "mechanical energy";
equation
  der(x) = v;
  m * der(v) = -c * x - d * v;
  energy = 0.5 * m * v ^ 2 + 0.5 * c * x ^ 2;
  annotation(experiment(StopTime = 5, Interval = 0.01));
end Oscillator;
