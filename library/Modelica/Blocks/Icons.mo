within Modelica.Blocks;
package Icons "Empty base classes marking the kind of a block"
  extends Modelica.Icons.IconsPackage;

  partial block Block "Marks a block with Real signals"
  end Block;

  partial block BooleanBlock "Marks a block with Boolean signals"
  end BooleanBlock;

  partial block IntegerBlock "Marks a block with Integer signals"
  end IntegerBlock;

  partial block PartialBooleanBlock "Marks a Boolean block"
  end PartialBooleanBlock;

  partial block DiscreteBlock "Marks a sampled block"
  end DiscreteBlock;
end Icons;
