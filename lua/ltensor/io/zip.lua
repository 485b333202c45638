-- ltensor.io.zip: the zip container of PyTorch checkpoints (torch.save since
-- 1.6), read and written.
--
-- Reading: the end of central directory record (and its zip64 form), then
-- the central directory; every entry's local header is checked against it.
-- Only stored entries (method 0, what torch.save writes) are read; a
-- deflated or encrypted entry is refused with a clear error.  Every offset
-- and size is checked against the real file size before anything is read,
-- entry names must be relative paths without "..", and each entry's CRC-32
-- is verified, so a corrupt or hostile file gives an error, never a crash,
-- a huge allocation or a hang.
--
-- Writing: stored entries, each entry's data aligned to 64 bytes (an extra
-- field of id "FB" pads the local header, as PyTorch's writer does), a
-- central directory and an end record; zip64 records when an entry or an
-- offset reaches 4 GiB (or when opts.zip64 asks for them, for tests).
--
-- Errors are raised as plain strings with `fail(msg)` given by the caller,
-- which adds the function name and the file's name.
local T = require "ltensor.core"
local compat = require "ltensor.compat"
local math = compat.math

local sunpack, spack = compat.sunpack, compat.spack
local concat = table.concat

local M = {}

local MAX32 = 4294967295
local ALIGN = 64
local EOCD_SIG, EOCD64_SIG, LOC64_SIG = "PK\5\6", "PK\6\6", "PK\6\7"
local CEN_SIG, LOC_SIG = "PK\1\2", "PK\3\4"

-- little-endian unsigned integers from a string at pos (1-based); the
-- caller has checked that the bytes exist
local function u16(s, pos) local a, b = s:byte(pos, pos + 1) return a + b * 256 end
local function u32(s, pos)
  local a, b, c, d = s:byte(pos, pos + 3)
  return a + b * 256 + c * 65536 + d * 16777216
end
-- 8 bytes: exact up to 2^53 on every host; larger values cannot be sizes
-- or offsets inside a real file, and are reported as too large
local function u64(s, pos)
  local lo, hi = u32(s, pos), u32(s, pos + 4)
  if hi >= 2097152 then return math.huge end
  return hi * 4294967296 + lo
end

-- Reads the central directory of an open file of `size` bytes.
-- Returns a list of entries {name, offset, size, crc, method, flags} and
-- a map name -> entry.  read_at(offset, n) returns exactly n bytes or fails.
function M.read_directory(read_at, size, fail)
  if size < 22 then fail("too small to be a zip archive (%d bytes)", size) end
  -- the end record is in the last 22 + 65535 bytes (its comment is at most 64 KiB)
  local tail_len = math.min(size, 22 + 65535)
  local tail_start = size - tail_len
  local tail = read_at(tail_start, tail_len)
  local eocd
  local pos = tail_len - 21
  while pos >= 1 do
    if tail:sub(pos, pos + 3) == EOCD_SIG and pos + 21 + u16(tail, pos + 20) <= tail_len then
      eocd = pos
      break
    end
    pos = pos - 1
  end
  if not eocd then fail("is not a zip archive (no end of central directory record)") end
  local eocd_off = tail_start + eocd - 1
  local disk, cd_disk = u16(tail, eocd + 4), u16(tail, eocd + 6)
  local count, cd_size, cd_off = u16(tail, eocd + 10), u32(tail, eocd + 12), u32(tail, eocd + 16)
  local limit = eocd_off   -- the central directory ends before this
  if count == 65535 or cd_size == MAX32 or cd_off == MAX32 then
    -- zip64: a locator right before the end record points at the zip64 end record
    if eocd_off < 20 then fail("has a truncated zip64 end record locator") end
    local loc = read_at(eocd_off - 20, 20)
    if loc:sub(1, 4) ~= LOC64_SIG then fail("has no zip64 end record locator") end
    local rec_off = u64(loc, 9)
    if rec_off > eocd_off - 20 - 56 then fail("has a zip64 end record offset outside the file") end
    local rec = read_at(rec_off, 56)
    if rec:sub(1, 4) ~= EOCD64_SIG then fail("has a bad zip64 end of central directory record") end
    disk, cd_disk = u32(rec, 17), u32(rec, 21)
    count, cd_size, cd_off = u64(rec, 33), u64(rec, 41), u64(rec, 49)
    limit = rec_off
  end
  if disk ~= 0 or cd_disk ~= 0 then fail("is a multi-part zip archive, which is not supported") end
  if cd_off > limit or cd_size > limit - cd_off then
    fail("has a central directory (offset %s, %s bytes) outside the file", tostring(cd_off), tostring(cd_size))
  end
  -- each entry takes at least 46 bytes: a count larger than that is a lie
  if count * 46 > cd_size then fail("claims %s entries in a %d-byte central directory", tostring(count), cd_size) end
  local cd = read_at(cd_off, cd_size)
  local entries, by_name = {}, {}
  pos = 1
  for i = 1, count do
    if pos + 45 > cd_size or cd:sub(pos, pos + 3) ~= CEN_SIG then
      fail("has a corrupt central directory (entry %d)", i)
    end
    local flags, method = u16(cd, pos + 8), u16(cd, pos + 10)
    local crc, csize, usize = u32(cd, pos + 16), u32(cd, pos + 20), u32(cd, pos + 24)
    local nlen, xlen, clen = u16(cd, pos + 28), u16(cd, pos + 30), u16(cd, pos + 32)
    local start_disk, off = u16(cd, pos + 34), u32(cd, pos + 42)
    local after = pos + 46 + nlen + xlen + clen
    if after - 1 > cd_size then fail("has a corrupt central directory (entry %d runs past its end)", i) end
    local name = cd:sub(pos + 46, pos + 45 + nlen)
    -- zip64 extra field: the 8-byte values replace the 0xFFFFFFFF ones, in order
    local x, xend = pos + 46 + nlen, pos + 46 + nlen + xlen
    while x + 3 < xend do
      local id, len = u16(cd, x), u16(cd, x + 2)
      if x + 4 + len > xend then fail("entry '%s' has a corrupt extra field", name) end
      if id == 1 then
        local p = x + 4
        local function take()
          if p + 8 > x + 4 + len then fail("entry '%s' has a short zip64 extra field", name) end
          local v = u64(cd, p)
          p = p + 8
          return v
        end
        if usize == MAX32 then usize = take() end
        if csize == MAX32 then csize = take() end
        if off == MAX32 then off = take() end
      end
      x = x + 4 + len
    end
    if start_disk ~= 0 and start_disk ~= 65535 then fail("entry '%s' is on another disk", name) end
    if name == "" or name:find("\0", 1, true) or name:find("\\", 1, true) or name:sub(1, 1) == "/"
      or name:find("^%a:") or ("/" .. name .. "/"):find("/%.%.?/") then
      fail("has an entry name that escapes the archive or is not a plain path: %q", name)
    end
    if by_name[name] then fail("has two entries named '%s'", name) end
    if flags % 2 == 1 then fail("entry '%s' is encrypted, which is not supported", name) end
    if method ~= 0 then
      fail("entry '%s' is compressed (method %d); only stored entries are supported, as torch.save writes them",
        name, method)
    end
    if csize ~= usize then fail("entry '%s' is stored but its sizes differ (%s and %s)", name, tostring(csize), tostring(usize)) end
    if off >= cd_off or usize > cd_off - off then
      fail("entry '%s' (offset %s, %s bytes) lies outside the file's data", name, tostring(off), tostring(usize))
    end
    local e = { name = name, offset = off, size = usize, crc = crc }
    entries[i] = e
    by_name[name] = e
    pos = after
  end
  for _, e in ipairs(entries) do e.limit = cd_off end
  return entries, by_name
end

-- The data of entry e: its local header checked, its CRC-32 verified.
function M.read_entry(read_at, e, fail)
  if e.offset + 30 > e.limit then fail("entry '%s' has a truncated local header", e.name) end
  local h = read_at(e.offset, 30)
  if h:sub(1, 4) ~= LOC_SIG then fail("entry '%s' has no local header at offset %d", e.name, e.offset) end
  local nlen, xlen = u16(h, 27), u16(h, 29)
  local data_off = e.offset + 30 + nlen + xlen
  if data_off > e.limit or e.size > e.limit - data_off then
    fail("entry '%s' (%d bytes at offset %d) runs past the file's data", e.name, e.size, data_off)
  end
  local data = read_at(data_off, e.size)
  if T._crc32(data) ~= e.crc then fail("entry '%s' is corrupt (CRC-32 mismatch)", e.name) end
  return data
end

-- ---------------------------------------------------------------------------
-- writing

local function le16(v) return spack("<I2", v) end
local function le32(v) return spack("<I4", v) end
local function le64(v)
  local lo = v % 4294967296
  return spack("<I4", lo) .. spack("<I4", (v - lo) / 4294967296)
end

-- entries: list of {name = string, data = string}; returns a list of
-- chunks (the archive's bytes in order) for the atomic writer.
function M.write(entries, opts)
  opts = opts or {}
  local chunks, central = {}, {}
  local off = 0
  local DOS_TIME, DOS_DATE = 0, 33 -- 1980-01-01 00:00: reproducible bytes
  for _, en in ipairs(entries) do
    local name, data = en.name, en.data
    local size, crc = #data, T._crc32(data)
    local big = opts.zip64 or size >= MAX32 or off >= MAX32
    local z64 = big and (le16(1) .. le16(16) .. le64(size) .. le64(size)) or ""
    -- pad the local header so that the data starts on a 64-byte boundary
    local hdr_len = 30 + #name + #z64 + 4
    local pad = (ALIGN - (off + hdr_len) % ALIGN) % ALIGN
    local extra = z64 .. le16(0x4246) .. le16(pad) .. string.rep("Z", pad)
    local version = big and 45 or 20
    local csz = big and MAX32 or size
    chunks[#chunks + 1] = concat({ LOC_SIG, le16(version), le16(0), le16(0), le16(DOS_TIME), le16(DOS_DATE),
      le32(crc), le32(csz), le32(csz), le16(#name), le16(#extra), name, extra })
    chunks[#chunks + 1] = data
    local cbig = big or off >= MAX32
    local cextra = cbig and (le16(1) .. le16(24) .. le64(size) .. le64(size) .. le64(off)) or ""
    central[#central + 1] = concat({ CEN_SIG, le16(version), le16(version), le16(0), le16(0), le16(DOS_TIME),
      le16(DOS_DATE), le32(crc), le32(csz), le32(csz), le16(#name), le16(#cextra), le16(0), le16(0), le16(0),
      le32(0), le32(cbig and MAX32 or off), name, cextra })
    off = off + 30 + #name + #extra + size
  end
  local cd = concat(central)
  local cd_off, n = off, #entries
  chunks[#chunks + 1] = cd
  local z64 = opts.zip64 or cd_off >= MAX32 or #cd >= MAX32 or n >= 65535
  if z64 then
    local rec_off = cd_off + #cd
    chunks[#chunks + 1] = concat({ EOCD64_SIG, le64(44), le16(45), le16(45), le32(0), le32(0),
      le64(n), le64(n), le64(#cd), le64(cd_off) })
    chunks[#chunks + 1] = concat({ LOC64_SIG, le32(0), le64(rec_off), le32(1) })
  end
  chunks[#chunks + 1] = concat({ EOCD_SIG, le16(0), le16(0), le16(z64 and 65535 or n), le16(z64 and 65535 or n),
    le32(z64 and MAX32 or #cd), le32(z64 and MAX32 or cd_off), le16(0) })
  return chunks
end

M._u64 = u64
return M
