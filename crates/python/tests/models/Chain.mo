model Chain "n first-order lags in series: n is structural (it sizes the arrays)"
  parameter Integer n = 3;
  parameter Real T = 0.5;
  Real x[n](each start = 0, each fixed = true);
equation
  T * der(x[1]) = 1 - x[1];
  for i in 2:n loop
    T * der(x[i]) = x[i - 1] - x[i];
  end for;
  annotation(experiment(StopTime = 3));
end Chain;
