within;
package Modelica "Bundled moss subset of the Modelica Standard Library interface (written from the physics)"
  extends Modelica.Icons.Package;
  annotation(version="4.0.0");
end Modelica;
