// A ball dropped onto the floor, losing a fraction of its speed at each bounce: two states
// and a state event whose reinit restarts the integration.
model BouncingBall
  parameter Real e = 0.8 "coefficient of restitution";
  parameter Real g = 9.81 "gravity [m/s2]";
  Real h(start = 1, fixed = true) "height [m]";
  Real v(start = 0, fixed = true) "velocity [m/s]";
equation
  der(h) = v;
  der(v) = -g;
  when h < 0 then
    reinit(v, -e * pre(v));
  end when;
end BouncingBall;
