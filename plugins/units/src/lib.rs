//! Unit conversions as a plain WebAssembly component: ordinary WIT functions,
//! no Wharf SDK. Wharf turns each exported function into a tool.

wit_bindgen::generate!({
    path: "wit",
    world: "units",
});

struct Units;

const ALL: [Unit; 13] = [
    Unit::Meter,
    Unit::Kilometer,
    Unit::Centimeter,
    Unit::Mile,
    Unit::Foot,
    Unit::Inch,
    Unit::Kilogram,
    Unit::Gram,
    Unit::Pound,
    Unit::Ounce,
    Unit::Celsius,
    Unit::Fahrenheit,
    Unit::Kelvin,
];

fn dimension(unit: Unit) -> Dimension {
    match unit {
        Unit::Meter | Unit::Kilometer | Unit::Centimeter | Unit::Mile | Unit::Foot | Unit::Inch => {
            Dimension::Length
        }
        Unit::Kilogram | Unit::Gram | Unit::Pound | Unit::Ounce => Dimension::Mass,
        Unit::Celsius | Unit::Fahrenheit | Unit::Kelvin => Dimension::Temperature,
    }
}

fn dimension_name(dimension: Dimension) -> &'static str {
    match dimension {
        Dimension::Length => "length",
        Dimension::Mass => "mass",
        Dimension::Temperature => "temperature",
    }
}

fn unit_name(unit: Unit) -> &'static str {
    match unit {
        Unit::Meter => "meter",
        Unit::Kilometer => "kilometer",
        Unit::Centimeter => "centimeter",
        Unit::Mile => "mile",
        Unit::Foot => "foot",
        Unit::Inch => "inch",
        Unit::Kilogram => "kilogram",
        Unit::Gram => "gram",
        Unit::Pound => "pound",
        Unit::Ounce => "ounce",
        Unit::Celsius => "celsius",
        Unit::Fahrenheit => "fahrenheit",
        Unit::Kelvin => "kelvin",
    }
}

/// The value in the dimension's base unit (meter, kilogram, kelvin).
fn to_base(value: f64, unit: Unit) -> f64 {
    match unit {
        Unit::Meter | Unit::Kilogram | Unit::Kelvin => value,
        Unit::Kilometer => value * 1000.0,
        Unit::Centimeter => value / 100.0,
        Unit::Mile => value * 1609.344,
        Unit::Foot => value * 0.3048,
        Unit::Inch => value * 0.0254,
        Unit::Gram => value / 1000.0,
        Unit::Pound => value * 0.453_592_37,
        Unit::Ounce => value * 0.028_349_523_125,
        Unit::Celsius => value + 273.15,
        Unit::Fahrenheit => (value - 32.0) * 5.0 / 9.0 + 273.15,
    }
}

fn from_base(value: f64, unit: Unit) -> f64 {
    match unit {
        Unit::Meter | Unit::Kilogram | Unit::Kelvin => value,
        Unit::Kilometer => value / 1000.0,
        Unit::Centimeter => value * 100.0,
        Unit::Mile => value / 1609.344,
        Unit::Foot => value / 0.3048,
        Unit::Inch => value / 0.0254,
        Unit::Gram => value * 1000.0,
        Unit::Pound => value / 0.453_592_37,
        Unit::Ounce => value / 0.028_349_523_125,
        Unit::Celsius => value - 273.15,
        Unit::Fahrenheit => (value - 273.15) * 9.0 / 5.0 + 32.0,
    }
}

/// Rounds away binary noise (0.30000000000000004) without hiding real digits.
fn tidy(value: f64) -> f64 {
    (value * 1e9).round() / 1e9
}

impl Guest for Units {
    fn convert(quantity: Quantity, target: Unit) -> Result<Quantity, String> {
        let (from, to) = (dimension(quantity.unit), dimension(target));
        if from != to {
            return Err(format!(
                "cannot convert {} (a {}) to {} (a {})",
                unit_name(quantity.unit),
                dimension_name(from),
                unit_name(target),
                dimension_name(to)
            ));
        }
        let value = tidy(from_base(to_base(quantity.value, quantity.unit), target));
        Ok(Quantity {
            value,
            unit: target,
        })
    }

    fn units(dimension_filter: Option<Dimension>) -> Vec<Unit> {
        ALL.into_iter()
            .filter(|unit| dimension_filter.is_none_or(|d| dimension(*unit) == d))
            .collect()
    }
}

export!(Units);
