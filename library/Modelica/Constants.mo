within Modelica;
package Constants "Mathematical and physical constants"
  extends Modelica.Icons.Package;
  import Modelica.Units.SI;

  final constant Real pi = 3.14159265358979323846 "Ratio of a circle's circumference to its diameter";
  final constant Real e = 2.71828182845904523536 "Base of the natural logarithm";
  final constant Real D2R(final unit="rad/deg") = pi/180 "Degrees to radians";
  final constant Real R2D(final unit="deg/rad") = 180/pi "Radians to degrees";
  final constant Real gamma = 0.57721566490153286061 "Euler-Mascheroni constant";

  final constant Real eps = 2.2204460492503131e-16 "Machine epsilon of IEEE double precision";
  final constant Real small = 1.0e-60 "Smallest number that is treated as non-zero";
  final constant Real inf = 1.0e60 "Number that is treated as infinite";
  final constant Integer Integer_inf = 2147483647 "Largest Integer value";

  final constant SI.Velocity c = 299792458 "Speed of light in vacuum";
  final constant SI.Acceleration g_n = 9.80665 "Standard acceleration of gravity on earth";
  final constant Real G(final unit="m3/(kg.s2)") = 6.67430e-11 "Newtonian constant of gravitation";
  final constant Real q(final unit="C") = 1.602176634e-19 "Elementary charge";
  final constant Real F(final unit="C/mol") = 9.648533212331002e4 "Faraday constant";
  final constant Real h(final unit="J.s") = 6.62607015e-34 "Planck constant";
  final constant Real k(final unit="J/K") = 1.380649e-23 "Boltzmann constant";
  final constant Real R(final unit="J/(mol.K)") = 8.31446261815324 "Molar gas constant";
  final constant Real sigma(final unit="W/(m2.K4)") = 5.670374419184429e-8 "Stefan-Boltzmann constant";
  final constant Real N_A(final unit="1/mol") = 6.02214076e23 "Avogadro constant";
  final constant Real mu_0(final unit="N/A2") = 1.25663706212e-6 "Magnetic constant";
  final constant Real epsilon_0(final unit="F/m") = 1/(mu_0*c*c) "Electric constant";
  final constant Real T_zero(final unit="degC") = -273.15 "Absolute zero temperature in degC";
end Constants;
