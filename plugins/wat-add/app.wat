;; The core module of the `add` plugin. The component-model tooling wraps it:
;; the world's `add: func(a: s32, b: s32) -> s32` lowers to (i32, i32) -> i32,
;; and with no strings or lists to pass there is no memory and no allocator.
(module
  (func (export "add") (param $a i32) (param $b i32) (result i32)
    (i32.add (local.get $a) (local.get $b))))
