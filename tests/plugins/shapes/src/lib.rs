//! A plain component (no Wharf SDK) exercising every WIT shape Wharf converts.

wit_bindgen::generate!({
    path: "wit",
    world: "shapes",
});

use exports::wharf_test::shapes::kinds::{
    Color, Guest as Kinds, GuestCounter, Perms, Point, Shape,
};

struct Shapes;

impl Guest for Shapes {
    fn greet(name: String) -> String {
        format!("Hello, {name}!")
    }

    fn ping() -> String {
        "pong".into()
    }

    fn touch(_name: String) {}
}

/// The counter resource; only here so that functions using it exist.
pub struct Counter(std::cell::Cell<u32>);

impl GuestCounter for Counter {
    fn new() -> Self {
        Self(std::cell::Cell::new(0))
    }

    fn inc(&self) -> u32 {
        self.0.set(self.0.get() + 1);
        self.0.get()
    }
}

impl Kinds for Shapes {
    type Counter = Counter;

    fn translate(p: Point, dx: i32, dy: i32) -> Point {
        Point {
            x: p.x + dx,
            y: p.y + dy,
            label: p.label,
        }
    }

    fn area(s: Shape) -> f64 {
        match s {
            Shape::Circle(r) => std::f64::consts::PI * r * r,
            Shape::Rect((w, h)) => w * h,
            Shape::Empty => 0.0,
        }
    }

    fn echo_shape(s: Shape) -> Shape {
        s
    }

    fn color_name(c: Color) -> String {
        match c {
            Color::Red => "red",
            Color::Green => "green",
            Color::Blue => "blue",
        }
        .into()
    }

    fn toggle_exec(p: Perms) -> Perms {
        p ^ Perms::EXEC
    }

    #[allow(clippy::too_many_arguments)]
    fn widths(
        a: u8,
        b: i8,
        c: u16,
        d: i16,
        e: u32,
        f: i32,
        g: u64,
        h: i64,
    ) -> (u8, i8, u16, i16, u32, i32, u64, i64) {
        (a, b, c, d, e, f, g, h)
    }

    fn floats(a: f32, b: f64) -> Vec<f64> {
        vec![f64::from(a), b]
    }

    fn maybe_double(x: Option<u32>) -> Option<u32> {
        x.map(|x| x.wrapping_mul(2))
    }

    fn divide(a: i32, b: i32) -> Result<i32, String> {
        a.checked_div(b)
            .ok_or_else(|| format!("cannot divide {a} by {b}"))
    }

    fn unwrap_or(r: Result<u32, String>, fallback: u32) -> u32 {
        r.unwrap_or(fallback)
    }

    fn next_char(c: char) -> char {
        char::from_u32(u32::from(c) + 1).unwrap_or(c)
    }

    fn sum(xs: Vec<i64>) -> i64 {
        xs.iter().sum()
    }

    fn enumerate(xs: Vec<String>) -> Vec<(u32, String)> {
        (0u32..).zip(xs).collect()
    }

    fn make_counter() -> exports::wharf_test::shapes::kinds::Counter {
        exports::wharf_test::shapes::kinds::Counter::new(Counter::new())
    }
}

export!(Shapes);
