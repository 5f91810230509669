// The steps of examples/ffi/c/steps.c from Zig. Zig 0.16 removed @cImport: the header is
// translated once, `zig translate-c -lc -I<sdk>/include <sdk>/include/dlpack_helpers.h >
// dlpack_helpers.zig` (build.zig's addTranslateC does the same), and imported as a file:
// nothing is restated by hand. printf is libc's (Zig's std writer API changes between releases).
// Build: zig build-exe steps.zig -lc -L<sdk>/lib -ldlpack_helpers -rpath <sdk>/lib
const std = @import("std");
const c = @import("dlpack_helpers.zig");

extern fn printf(format: [*:0]const u8, ...) c_int;

const count = 6;
var released: c_int = 0;

// The release callback: the tensor keeps the buffer (C heap) and calls this once.
fn onRelease(ctx: ?*anyopaque) callconv(.c) void {
    const buf: [*]f32 = @ptrCast(@alignCast(ctx.?));
    _ = printf("    release callback: buffer of %d floats\n", @as(c_int, count));
    std.heap.c_allocator.free(buf[0..count]);
    released += 1;
}

fn yes(b: bool) [*:0]const u8 {
    return if (b) "true" else "false";
}

fn must(st: c.dlpack_helpers_status, what: [*:0]const u8) void {
    if (st == c.DLPACK_HELPERS_STATUS_OK) return;
    _ = printf("%s failed: %s\n", what, c.dlpack_last_error_message());
    std.process.exit(1);
}

// Element [i][j] of a 2-D float32 tensor, through its strides (in elements) and byte_offset.
fn at(dl: *const c.DLTensor, i: i64, j: i64) *f32 {
    const base: [*]u8 = @ptrCast(dl.data.?);
    const idx = i * dl.strides[0] + j * dl.strides[1];
    return @ptrCast(@alignCast(base + @as(usize, @intCast(@as(i64, @intCast(dl.byte_offset)) + 4 * idx))));
}

// (g) the error path from 8 threads (see steps.c): each refuses its own dtype.
const threads = 8;
const calls = 20000;
var expected: [threads][c.DLPACK_HELPERS_ERROR_MESSAGE_CAPACITY]u8 = undefined;

fn refuseOptions(k: usize) c.dlpack_helpers_validate_options {
    return .{ .struct_size = @sizeOf(c.dlpack_helpers_validate_options), .flags = c.DLPACK_HELPERS_VALIDATE_REQUIRE_DTYPE, .dtype = .{ .code = c.kDLInt, .bits = 64, .lanes = @intCast(k + 1) } };
}

fn work(t: *c.DLManagedTensorVersioned, k: usize, two_call: bool, wrong: *usize) void {
    var o = refuseOptions(k);
    var err = c.dlpack_helpers_error{ .struct_size = @sizeOf(c.dlpack_helpers_error) };
    for (0..calls) |_| {
        var msg: [*c]const u8 = undefined;
        if (two_call) {
            if (c.dlpack_tensor_validate(t, &o, null) == c.DLPACK_HELPERS_STATUS_OK) return;
            msg = c.dlpack_last_error_message();
        } else {
            if (c.dlpack_tensor_validate_with_error(t, &o, null, &err) == c.DLPACK_HELPERS_STATUS_OK) return;
            msg = &err.message;
        }
        if (!std.mem.eql(u8, std.mem.span(msg), std.mem.sliceTo(&expected[k], 0))) wrong.* += 1;
    }
}

fn stress(t: *c.DLManagedTensorVersioned, two_call: bool) !usize {
    var th: [threads]std.Thread = undefined;
    var wrong: [threads]usize = @splat(0);
    for (0..threads) |k| th[k] = try std.Thread.spawn(.{}, work, .{ t, k, two_call, &wrong[k] });
    var total: usize = 0;
    for (0..threads) |k| {
        th[k].join();
        total += wrong[k];
    }
    return total;
}

pub fn main() !void {
    // (a) what the library is
    var info = c.dlpack_helpers_info{ .struct_size = @sizeOf(c.dlpack_helpers_info) };
    must(c.dlpack_get_info(&info), "dlpack_get_info");
    _ = printf("(a) library %s, DLPack ABI major %u, DLPack %u.%u, caps 0x%llx, legacy %s, spec %u, profiles 0x%x, filled %zu bytes\n", info.version, info.dlpack_abi_major, info.dlpack_version.major, info.dlpack_version.minor, @as(c_ulonglong, info.capabilities), yes(info.accepts_legacy), info.spec_version, info.profiles, info.struct_size);

    // (b) a producer: a 2x3 float32 tensor over our own buffer, released through a callback
    const buf = try std.heap.c_allocator.alloc(f32, count);
    for (buf, 0..) |*v, i| v.* = @floatFromInt(i);
    const shape = [_]i64{ 2, 3 };
    const cpu = c.DLDevice{ .device_type = c.kDLCPU, .device_id = 0 };
    const f32t = c.DLDataType{ .code = c.kDLFloat, .bits = 32, .lanes = 1 };
    var t: [*c]c.DLManagedTensorVersioned = null;
    must(c.dlpack_tensor_create(buf.ptr, cpu, 2, &shape, null, f32t, 0, 0, onRelease, buf.ptr, &t), "dlpack_tensor_create");
    _ = printf("(b) created a 2x3 float32 tensor\n");

    // (c) a consumer: version, validation, element [1][2] through the strides, queries, names
    var compat: c.dlpack_helpers_version_compat = -1;
    must(c.dlpack_tensor_check_version_or_delete(t, &compat), "check_version");
    var opt = c.dlpack_helpers_validate_options{ .struct_size = @sizeOf(c.dlpack_helpers_validate_options), .flags = c.DLPACK_HELPERS_VALIDATE_REQUIRE_CPU_ACCESSIBLE | c.DLPACK_HELPERS_VALIDATE_REQUIRE_DTYPE, .dtype = f32t };
    var layout: c.dlpack_helpers_layout = undefined;
    must(c.dlpack_tensor_validate(t, &opt, &layout), "validate");
    const dl = &t.*.dl_tensor;
    var access: c.dlpack_helpers_host_access = -1;
    must(c.dlpack_tensor_host_access(t, null, &access), "host_access");
    var dev: c.DLDevice = undefined;
    must(c.dlpack_get_device(t, &dev), "get_device");
    var dev_name: [c.DLPACK_HELPERS_NAME_MAX]u8 = undefined;
    var dtype_name: [c.DLPACK_HELPERS_NAME_MAX]u8 = undefined;
    must(c.dlpack_device_format(dev, &dev_name, dev_name.len, null), "device_format");
    must(c.dlpack_dtype_format(dl.dtype, &dtype_name, dtype_name.len, null), "dtype_format");
    _ = printf("(c) version compat %d, valid (numel %lld, %lld bytes), t[1][2] = %g, host access %d, cpu accessible %s, device %s (type %d id %d), dtype %s\n", compat, @as(c_longlong, layout.numel), @as(c_longlong, layout.nbytes), @as(f64, at(dl, 1, 2).*), access, yes(c.dlpack_is_cpu_accessible(dev)), &dev_name, @as(c_int, @intCast(dev.device_type)), dev.device_id, &dtype_name);

    // (e) a refused validation: the status, its name and the message
    opt.dtype = .{ .code = c.kDLInt, .bits = 64, .lanes = 1 };
    const st = c.dlpack_tensor_validate(t, &opt, null);
    _ = printf("(e) validate as int64: status %d %s: %s\n", st, c.dlpack_status_string(st), c.dlpack_last_error_message());

    // (d) one delete: the deleter frees the struct and calls onRelease once
    c.dlpack_tensor_delete(t);
    _ = printf("(d) deleted; release callback ran %d time(s)\n", released);
    if (released != 1) std.process.exit(1);

    // (f) a producer with no callback: the library allocates the buffer, its deleter frees it
    var a: [*c]c.DLManagedTensorVersioned = null;
    var err = c.dlpack_helpers_error{ .struct_size = @sizeOf(c.dlpack_helpers_error) };
    must(c.dlpack_tensor_alloc_with_error(cpu, 2, &shape, null, f32t, 0, &a, &err), "alloc");
    const ad = &a.*.dl_tensor;
    for (0..2) |i| for (0..3) |j| {
        at(ad, @intCast(i), @intCast(j)).* = @floatFromInt(10 * (3 * i + j));
    };
    opt.dtype = f32t;
    must(c.dlpack_tensor_validate_with_error(a, &opt, &layout, &err), "validate");
    _ = printf("(f) allocated and filled a 2x3 float32 tensor with no callback: valid (numel %lld, %lld bytes), t[1][2] = %g, data aligned to %d: %s\n", @as(c_longlong, layout.numel), @as(c_longlong, layout.nbytes), @as(f64, at(ad, 1, 2).*), @as(c_int, c.DLPACK_HELPERS_ALLOC_ALIGNMENT), yes(@intFromPtr(ad.data) % c.DLPACK_HELPERS_ALLOC_ALIGNMENT == 0));
    const gpu = c.DLDevice{ .device_type = c.kDLCUDA, .device_id = 0 };
    var refused: [*c]c.DLManagedTensorVersioned = null;
    const st2 = c.dlpack_tensor_alloc_with_error(gpu, 2, &shape, null, f32t, 0, &refused, &err);
    _ = printf("(f) alloc on cuda:0: status %d %s (error object: status %d): %s\n", st2, c.dlpack_status_string(st2), err.status, &err.message);

    // (g) the error path from 8 threads, on the allocated tensor
    for (0..threads) |k| {
        var o = refuseOptions(k);
        if (c.dlpack_tensor_validate_with_error(a, &o, null, &err) == c.DLPACK_HELPERS_STATUS_OK) std.process.exit(1);
        expected[k] = err.message;
    }
    const wrong = try stress(a, false);
    _ = printf("(g) error object: %d threads, %d failing calls, %zu wrong messages\n", @as(c_int, threads), @as(c_int, threads * calls), wrong);
    _ = printf("[figure] two-call thread-local path: %zu wrong messages of %d\n", try stress(a, true), @as(c_int, threads * calls));
    c.dlpack_tensor_delete(a);
    _ = printf("(h) deleted the allocated tensor\n");
    if (wrong != 0) std.process.exit(1);
}
