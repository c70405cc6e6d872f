//! Arithmetic expressions: a small recursive-descent parser that evaluates as it goes.
//!
//! Grammar, loosest binding first:
//!
//! ```text
//! expression := term (("+" | "-") term)*
//! term       := unary (("*" | "/") unary)*
//! unary      := ("-" | "+") unary | power
//! power      := primary ("^" unary)?          right-associative: 2^3^2 = 2^9
//! primary    := number | "(" expression ")"
//! number     := digits ["." digits] [("e" | "E") ["+" | "-"] digits]   or "." digits ...
//! ```
//!
//! So `-2^2` is `-(2^2)` = -4, as in mathematics.

use std::fmt;

/// How deeply parentheses and unary signs may nest before the parser gives up, so that
/// a hostile expression cannot exhaust the stack.
const MAX_DEPTH: usize = 200;

/// Why an expression could not be evaluated, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct ExprError {
    /// 1-based column (in characters) where the problem was found.
    pub column: usize,
    /// What is wrong there.
    pub message: String,
}

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at column {}", self.message, self.column)
    }
}

impl std::error::Error for ExprError {}

/// Evaluates `expression`: numbers, `+ - * / ^`, unary minus and parentheses.
///
/// Division by zero and results that are not finite numbers are errors too.
pub fn evaluate(expression: &str) -> Result<f64, ExprError> {
    let mut parser = Parser {
        chars: expression.chars().collect(),
        at: 0,
        depth: 0,
    };
    let value = parser.expression()?;
    parser.skip_spaces();
    if let Some(c) = parser.peek() {
        return Err(parser.error(format!("unexpected `{c}`")));
    }
    if !value.is_finite() {
        return Err(ExprError {
            column: 1,
            message: "the result is too large to represent".into(),
        });
    }
    Ok(value)
}

/// The state of a parse: the characters and the index of the next one.
struct Parser {
    chars: Vec<char>,
    at: usize,
    depth: usize,
}

impl Parser {
    fn expression(&mut self) -> Result<f64, ExprError> {
        let mut value = self.term()?;
        loop {
            match self.next_operator(&['+', '-']) {
                Some('+') => value += self.term()?,
                Some(_) => value -= self.term()?,
                None => return Ok(value),
            }
        }
    }

    fn term(&mut self) -> Result<f64, ExprError> {
        let mut value = self.unary()?;
        loop {
            let column = self.column_after_spaces();
            match self.next_operator(&['*', '/']) {
                Some('*') => value *= self.unary()?,
                Some(_) => {
                    let divisor = self.unary()?;
                    if divisor == 0.0 {
                        return Err(ExprError {
                            column,
                            message: "division by zero".into(),
                        });
                    }
                    value /= divisor;
                }
                None => return Ok(value),
            }
        }
    }

    fn unary(&mut self) -> Result<f64, ExprError> {
        self.nested(|parser| match parser.next_operator(&['-', '+']) {
            Some('-') => Ok(-parser.unary()?),
            Some(_) => parser.unary(),
            None => parser.power(),
        })
    }

    fn power(&mut self) -> Result<f64, ExprError> {
        let base = self.primary()?;
        let column = self.column_after_spaces();
        if self.next_operator(&['^']).is_none() {
            return Ok(base);
        }
        let exponent = self.unary()?;
        let value = base.powf(exponent);
        if value.is_nan() {
            return Err(ExprError {
                column,
                message: format!("{base} ^ {exponent} is not a real number"),
            });
        }
        Ok(value)
    }

    fn primary(&mut self) -> Result<f64, ExprError> {
        self.skip_spaces();
        match self.peek() {
            Some('(') => {
                let open = self.column();
                self.at += 1;
                let value = self.nested(Self::expression)?;
                self.skip_spaces();
                match self.peek() {
                    Some(')') => {
                        self.at += 1;
                        Ok(value)
                    }
                    Some(c) => Err(self.error(format!(
                        "expected `)` to close the `(` at column {open}, found `{c}`"
                    ))),
                    None => Err(self.error(format!(
                        "expected `)` to close the `(` at column {open}, found the end"
                    ))),
                }
            }
            Some(c) if c.is_ascii_digit() || c == '.' => self.number(),
            Some(c) => Err(self.error(format!("expected a number or `(`, found `{c}`"))),
            None => Err(self.error("expected a number or `(`, found the end".into())),
        }
    }

    fn number(&mut self) -> Result<f64, ExprError> {
        let start = self.at;
        self.digits();
        if self.peek() == Some('.') {
            self.at += 1;
            self.digits();
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            self.at += 1;
            if matches!(self.peek(), Some('+' | '-')) {
                self.at += 1;
            }
            if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
                return Err(self.error("expected the digits of an exponent".into()));
            }
            self.digits();
        }
        let text: String = self.chars[start..self.at].iter().collect();
        text.parse().map_err(|_| ExprError {
            column: start + 1,
            message: format!("`{text}` is not a number"),
        })
    }

    /// Runs `parse` one level deeper, refusing to go past [`MAX_DEPTH`].
    fn nested(
        &mut self,
        parse: impl FnOnce(&mut Self) -> Result<f64, ExprError>,
    ) -> Result<f64, ExprError> {
        if self.depth == MAX_DEPTH {
            return Err(self.error(format!("nested more than {MAX_DEPTH} levels deep")));
        }
        self.depth += 1;
        let value = parse(self);
        self.depth -= 1;
        value
    }

    /// Consumes the next non-space character if it is one of `operators`.
    fn next_operator(&mut self, operators: &[char]) -> Option<char> {
        self.skip_spaces();
        let c = self.peek().filter(|c| operators.contains(c))?;
        self.at += 1;
        Some(c)
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
    }

    fn skip_spaces(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.at += 1;
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    /// The 1-based column of the next character.
    fn column(&self) -> usize {
        self.at + 1
    }

    fn column_after_spaces(&mut self) -> usize {
        self.skip_spaces();
        self.column()
    }

    fn error(&self, message: String) -> ExprError {
        ExprError {
            column: self.column(),
            message,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(column: usize, message: &str) -> Result<f64, ExprError> {
        Err(ExprError {
            column,
            message: message.into(),
        })
    }

    #[test]
    fn numbers() {
        assert_eq!(evaluate("42"), Ok(42.0));
        assert_eq!(evaluate(" 3.25 "), Ok(3.25));
        assert_eq!(evaluate(".5"), Ok(0.5));
        assert_eq!(evaluate("2."), Ok(2.0));
        assert_eq!(evaluate("1.5e3"), Ok(1500.0));
        assert_eq!(evaluate("2E-1"), Ok(0.2));
    }

    #[test]
    fn precedence_and_associativity() {
        assert_eq!(evaluate("1 + 2 * 3"), Ok(7.0));
        assert_eq!(evaluate("(1 + 2) * 3"), Ok(9.0));
        assert_eq!(evaluate("10 - 4 - 3"), Ok(3.0));
        assert_eq!(evaluate("64 / 4 / 2"), Ok(8.0));
        assert_eq!(evaluate("2 ^ 3 ^ 2"), Ok(512.0));
        assert_eq!(evaluate("2 * 3 ^ 2"), Ok(18.0));
        assert_eq!(evaluate("2 ^ -1"), Ok(0.5));
    }

    #[test]
    fn unary_signs() {
        assert_eq!(evaluate("-3"), Ok(-3.0));
        assert_eq!(evaluate("--3"), Ok(3.0));
        assert_eq!(evaluate("+3 - -2"), Ok(5.0));
        assert_eq!(evaluate("-2 ^ 2"), Ok(-4.0));
        assert_eq!(evaluate("(-2) ^ 2"), Ok(4.0));
        assert_eq!(evaluate("-(1 + 2) * 2"), Ok(-6.0));
    }

    #[test]
    fn says_where_it_failed() {
        assert_eq!(
            evaluate(""),
            error(1, "expected a number or `(`, found the end")
        );
        assert_eq!(
            evaluate("1 +"),
            error(4, "expected a number or `(`, found the end")
        );
        assert_eq!(
            evaluate("1 + x"),
            error(5, "expected a number or `(`, found `x`")
        );
        assert_eq!(evaluate("1 2"), error(3, "unexpected `2`"));
        assert_eq!(
            evaluate("2 * (3 + 4"),
            error(
                11,
                "expected `)` to close the `(` at column 5, found the end"
            )
        );
        assert_eq!(
            evaluate("(1]"),
            error(3, "expected `)` to close the `(` at column 1, found `]`")
        );
        assert_eq!(evaluate("1 + 2)"), error(6, "unexpected `)`"));
        assert_eq!(
            evaluate("1e+"),
            error(4, "expected the digits of an exponent")
        );
        assert_eq!(evaluate("."), error(1, "`.` is not a number"));
    }

    #[test]
    fn division_by_zero_points_at_the_operator() {
        assert_eq!(evaluate("1 + 4 / (2 - 2)"), error(7, "division by zero"));
    }

    #[test]
    fn results_must_be_real_and_finite() {
        assert_eq!(
            evaluate("(-8) ^ 0.5"),
            error(6, "-8 ^ 0.5 is not a real number")
        );
        assert_eq!(
            evaluate("10 ^ 400"),
            error(1, "the result is too large to represent")
        );
    }

    #[test]
    fn deep_nesting_is_refused() {
        let deep = format!("{}1{}", "(".repeat(500), ")".repeat(500));
        assert_eq!(
            evaluate(&deep).map_err(|e| e.message),
            Err(format!("nested more than {MAX_DEPTH} levels deep"))
        );
        let shallow = format!("{}1{}", "(".repeat(50), ")".repeat(50));
        assert_eq!(evaluate(&shallow), Ok(1.0));
        assert!(evaluate(&"-".repeat(10_000)).is_err());
    }
}
