// Microkernels of `deno task bench roofline`: the adapter's own ceilings, f32 FMA rate and memory bandwidth.
//
// Bindings (group 0):
//   0 p    uniform     Params
//   1 out  read_write  [n] vec4<f32>: main_fma writes one vec4 per invocation (=); main_copy writes src into it (=)
//   2 src  read        [n] vec4<f32>, read by main_copy (bind any buffer for main_fma)
//
// main_fma   each invocation runs `iterations` rounds of 32 independent vec4 FMA chains (8 accumulators, 4 rounds
//            written out: no dependency stalls, negligible loop overhead): 256 f32 FLOPs a round. The multiplier
//            and addend are uniforms, so nothing folds; the sum is stored, so nothing is dead. Workgroup 256; grid
//            foldGrid(invocations / 256); the invocation index is linear over the folded grid.
// main_copy  out[i] = src[i] for i < count: 32 bytes moved per invocation (a read and a write of a vec4).
//            Workgroup 256; grid foldGrid(ceil(count / 256)).

struct Params {
  iterations: u32,
  count: u32,
  mul: f32,
  add: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> out: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> src: array<vec4<f32>>;

fn linear(wg: vec3u, nwg: vec3u, li: u32) -> u32 {
  return (wg.y * nwg.x + wg.x) * 256u + li;
}

@compute @workgroup_size(256)
fn main_fma(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u,
            @builtin(local_invocation_index) li: u32) {
  let id = linear(wg, nwg, li);
  let m = vec4<f32>(p.mul);
  let c = vec4<f32>(p.add);
  let x = f32(id % 1024u) * 1e-4;
  var a0 = vec4<f32>(x, x + 0.1, x + 0.2, x + 0.3);
  var a1 = a0 + 0.01;
  var a2 = a0 + 0.02;
  var a3 = a0 + 0.03;
  var a4 = a0 + 0.04;
  var a5 = a0 + 0.05;
  var a6 = a0 + 0.06;
  var a7 = a0 + 0.07;
  for (var i = 0u; i < p.iterations; i++) {
    a0 = fma(a0, m, c); a1 = fma(a1, m, c); a2 = fma(a2, m, c); a3 = fma(a3, m, c);
    a4 = fma(a4, m, c); a5 = fma(a5, m, c); a6 = fma(a6, m, c); a7 = fma(a7, m, c);
    a0 = fma(a0, m, c); a1 = fma(a1, m, c); a2 = fma(a2, m, c); a3 = fma(a3, m, c);
    a4 = fma(a4, m, c); a5 = fma(a5, m, c); a6 = fma(a6, m, c); a7 = fma(a7, m, c);
    a0 = fma(a0, m, c); a1 = fma(a1, m, c); a2 = fma(a2, m, c); a3 = fma(a3, m, c);
    a4 = fma(a4, m, c); a5 = fma(a5, m, c); a6 = fma(a6, m, c); a7 = fma(a7, m, c);
    a0 = fma(a0, m, c); a1 = fma(a1, m, c); a2 = fma(a2, m, c); a3 = fma(a3, m, c);
    a4 = fma(a4, m, c); a5 = fma(a5, m, c); a6 = fma(a6, m, c); a7 = fma(a7, m, c);
  }
  out[id] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}

@compute @workgroup_size(256)
fn main_copy(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u,
             @builtin(local_invocation_index) li: u32) {
  let id = linear(wg, nwg, li);
  if (id < p.count) {
    out[id] = src[id];
  }
}
