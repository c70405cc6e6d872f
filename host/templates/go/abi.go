//go:build wasip1

// The canonical-ABI glue between the world in wit/world.wit and Go, written
// by hand (no generated bindings are needed):
//
//   - A string argument arrives as (pointer, length) into linear memory,
//     written there by the host through `cabi_realloc`.
//   - A string result is returned as a pointer to an 8-byte return area: the
//     string's pointer and length.
//   - Memory handed out (by cabi_realloc, or for returned strings) is kept
//     reachable from a global, so Go's garbage collector leaves it alone until
//     the call ends (each Wharf call runs in a fresh instance).
//
// A new tool is a WIT function in wit/world.wit plus one export below.
package main

import "unsafe"

// keep holds every allocation handed to the host.
var keep [][]byte

// returnArea is where results are written; its address is returned.
var returnArea [2]uint32

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

// returnString places a string where the host can read it and returns the
// address of its (pointer, length) pair.
func returnString(s string) uint32 {
	returnArea = [2]uint32{1, 0}
	if len(s) > 0 {
		buf := []byte(s)
		keep = append(keep, buf)
		returnArea = [2]uint32{uint32(uintptr(unsafe.Pointer(&buf[0]))), uint32(len(buf))}
	}
	return uint32(uintptr(unsafe.Pointer(&returnArea)))
}

// greet: func(name: string) -> string
//
//go:wasmexport greet
func exportGreet(ptr, length uint32) uint32 {
	return returnString(greeting(liftString(ptr, length)))
}
