module dlpackhelpers.example/ffi

go 1.19
