/** A C file imported `with { type: "file" }` (Bun): its path, inside the binary when compiled. For bun:ffi's cc. */
declare module "*.c" {
  const path: string;
  export default path;
}
