within Modelica;
package Icons "Empty base classes that only mark the role of a class"

  partial package Package "Marks a package"
  end Package;

  partial package BasesPackage "Marks a package of base classes"
    extends Modelica.Icons.Package;
  end BasesPackage;

  partial package InterfacesPackage "Marks a package of interfaces"
    extends Modelica.Icons.Package;
  end InterfacesPackage;

  partial package SourcesPackage "Marks a package of sources"
    extends Modelica.Icons.Package;
  end SourcesPackage;

  partial package SensorsPackage "Marks a package of sensors"
    extends Modelica.Icons.Package;
  end SensorsPackage;

  partial package ExamplesPackage "Marks a package of examples"
    extends Modelica.Icons.Package;
  end ExamplesPackage;

  partial package UtilitiesPackage "Marks a package of utilities"
    extends Modelica.Icons.Package;
  end UtilitiesPackage;

  partial package TypesPackage "Marks a package of types"
    extends Modelica.Icons.Package;
  end TypesPackage;

  partial package FunctionsPackage "Marks a package of functions"
    extends Modelica.Icons.Package;
  end FunctionsPackage;

  partial package VariantsPackage "Marks a package of variants"
    extends Modelica.Icons.Package;
  end VariantsPackage;

  partial package IconsPackage "Marks a package of icons"
    extends Modelica.Icons.Package;
  end IconsPackage;

  partial package InternalPackage "Marks an internal package"
  end InternalPackage;

  partial package MaterialPropertiesPackage "Marks a package of material properties"
    extends Modelica.Icons.Package;
  end MaterialPropertiesPackage;

  partial model Example "Marks a runnable example"
  end Example;

  partial function Function "Marks a function"
  end Function;

  partial record Record "Marks a record"
  end Record;

  partial class RoundSensor "Marks a round sensor"
  end RoundSensor;

  partial class RotationalSensor "Marks a rotational sensor"
  end RotationalSensor;

  partial class TranslationalSensor "Marks a translational sensor"
  end TranslationalSensor;

  partial class Library "Marks a library"
  end Library;

  partial class Information "Marks an information class"
  end Information;

  partial class Contact "Marks a contact class"
  end Contact;

  partial class References "Marks a references class"
  end References;

  partial class ReleaseNotes "Marks release notes"
  end ReleaseNotes;

  partial class ObsoleteModel "Marks an obsolete class"
  end ObsoleteModel;

  partial class UnderConstruction "Marks a class under construction"
  end UnderConstruction;
end Icons;
