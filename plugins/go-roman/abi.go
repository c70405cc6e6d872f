// The canonical-ABI glue between the `roman` world (wit/roman.wit) and Go,
// written by hand (wit-bindgen-go needs modules this build cannot download).
//
//   - A string argument arrives as (pointer, length) into linear memory, written
//     there by the host through `cabi_realloc`.
//   - A `result<T, string>` is returned as a pointer to a 12-byte return area:
//     byte 0 is the case (0 ok, 1 err), bytes 4..12 the payload (a u32, or a
//     string's pointer and length).
//   - Memory handed out (by cabi_realloc, or for returned strings) is kept reachable
//     from a global, so Go's garbage collector leaves it alone until the call ends
//     (each Wharf call runs in a fresh instance).
package main

import "unsafe"

// keep holds every allocation handed to the host.
var keep [][]byte

// returnArea is where results are written; its address is returned.
var returnArea [3]uint32

// cabi_realloc is the allocator the host uses to pass arguments in.
//
//go:wasmexport cabi_realloc
func cabiRealloc(oldPtr, oldSize, align, newSize uint32) uint32 {
	if newSize == 0 {
		return align
	}
	buf := make([]byte, newSize+align)
	start := uintptr(unsafe.Pointer(&buf[0]))
	aligned := (start + uintptr(align) - 1) &^ (uintptr(align) - 1)
	if oldPtr != 0 && oldSize != 0 {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(aligned)), newSize),
			unsafe.Slice((*byte)(unsafe.Pointer(uintptr(oldPtr))), min(oldSize, newSize)))
	}
	keep = append(keep, buf)
	return uint32(aligned)
}

// liftString copies a string argument out of linear memory.
func liftString(ptr, length uint32) string {
	if length == 0 {
		return ""
	}
	return string(unsafe.Slice((*byte)(unsafe.Pointer(uintptr(ptr))), length))
}

// lowerString places a string where the host can read it: (pointer, length).
func lowerString(s string) (uint32, uint32) {
	if len(s) == 0 {
		return 1, 0
	}
	buf := []byte(s)
	keep = append(keep, buf)
	return uint32(uintptr(unsafe.Pointer(&buf[0]))), uint32(len(buf))
}

func returnOkString(s string) uint32 {
	ptr, length := lowerString(s)
	returnArea = [3]uint32{0, ptr, length}
	return uint32(uintptr(unsafe.Pointer(&returnArea)))
}

func returnOkU32(value uint32) uint32 {
	returnArea = [3]uint32{0, value, 0}
	return uint32(uintptr(unsafe.Pointer(&returnArea)))
}

func returnErr(err error) uint32 {
	ptr, length := lowerString(err.Error())
	returnArea = [3]uint32{1, ptr, length}
	return uint32(uintptr(unsafe.Pointer(&returnArea)))
}

// to-roman: func(number: u32) -> result<string, string>
//
//go:wasmexport to-roman
func exportToRoman(number uint32) uint32 {
	text, err := toRoman(number)
	if err != nil {
		return returnErr(err)
	}
	return returnOkString(text)
}

// from-roman: func(numeral: string) -> result<u32, string>
//
//go:wasmexport from-roman
func exportFromRoman(ptr, length uint32) uint32 {
	value, err := fromRoman(liftString(ptr, length))
	if err != nil {
		return returnErr(err)
	}
	return returnOkU32(value)
}
