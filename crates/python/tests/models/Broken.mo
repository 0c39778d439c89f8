model Broken
  parameter Real k = 1;
  Real x(start = 1);
equation
  der(x) = -k * x
end Broken;
