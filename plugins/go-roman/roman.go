// Roman numerals both ways: the logic, with no knowledge of WebAssembly.
package main

import (
	"errors"
	"strconv"
	"strings"
)

// No fmt: it would double the size of the component.

type numeral struct {
	value  uint32
	symbol string
}

var numerals = []numeral{
	{1000, "M"}, {900, "CM"}, {500, "D"}, {400, "CD"},
	{100, "C"}, {90, "XC"}, {50, "L"}, {40, "XL"},
	{10, "X"}, {9, "IX"}, {5, "V"}, {4, "IV"}, {1, "I"},
}

var digitValues = map[rune]uint32{
	'I': 1, 'V': 5, 'X': 10, 'L': 50, 'C': 100, 'D': 500, 'M': 1000,
}

// toRoman writes 1..=3999 in Roman numerals.
func toRoman(number uint32) (string, error) {
	if number == 0 || number > 3999 {
		return "", errors.New(strconv.FormatUint(uint64(number), 10) +
			" has no Roman numeral: they cover 1 to 3999")
	}
	var out strings.Builder
	for _, n := range numerals {
		for number >= n.value {
			out.WriteString(n.symbol)
			number -= n.value
		}
	}
	return out.String(), nil
}

// fromRoman reads a numeral in canonical form (as toRoman writes it), in
// either case.
func fromRoman(text string) (uint32, error) {
	upper := strings.ToUpper(strings.TrimSpace(text))
	if upper == "" {
		return 0, errors.New("the numeral is empty")
	}
	var total uint32
	runes := []rune(upper)
	for i, r := range runes {
		value, ok := digitValues[r]
		if !ok {
			return 0, errors.New(strconv.Quote(text) + " is not a Roman numeral: " +
				strconv.QuoteRune(r) + " is not one of I V X L C D M")
		}
		if i+1 < len(runes) && value < digitValues[runes[i+1]] {
			total -= value
		} else {
			total += value
		}
	}
	canonical, err := toRoman(total)
	if err != nil {
		return 0, errors.New(strconv.Quote(text) + " is not a well-formed Roman numeral")
	}
	if canonical != upper {
		return 0, errors.New(strconv.Quote(text) + " is not a Roman numeral in canonical form (" +
			strconv.FormatUint(uint64(total), 10) + " is written " + canonical + ")")
	}
	return total, nil
}
