/** WGSL: the linear workgroup id and count of a dispatch folded by grid1d() into x·y workgroups. */
export const gridWgsl = /* wgsl */ `
fn linear_group_id(wid: vec3u, nwg: vec3u) -> u32 { return wid.x + wid.y * nwg.x; }
fn linear_group_count(nwg: vec3u) -> u32 { return nwg.x * nwg.y; }
`;
