model Blowup "Fails at run time: an assert stops it once x passes a limit"
  parameter Real limit = 2;
  Real x(start = 1, fixed = true);
equation
  der(x) = x;
  assert(x < limit, "x exceeded the limit");
  annotation(experiment(StopTime = 2));
end Blowup;
