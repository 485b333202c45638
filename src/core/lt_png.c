/*
 * lt_png.c -- PNG encoding and decoding over zlib, the codec behind
 * lua/ltensor/image.lua (which handles files, PPM/PGM and dtype rules);
 * Lua-free: src/binding/l_image.c checks the arguments, allocates the
 * buffers (as userdata, so that an error leaks nothing) and raises the
 * messages these functions return.
 *
 * Decoding handles every PNG colour type (grey, RGB, palette, grey+alpha,
 * RGBA), bit depths 1-16 (16-bit samples are rounded to 8 bits as libpng's
 * strip_16 does, sub-byte grey is scaled to 0..255) and Adam7 interlacing.
 * Every length and CRC in a file is checked before memory is touched; the
 * zlib stream is always ended before an error is returned.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>
#include "lt_png.h"

static const unsigned char PNG_SIG[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
#define MAX_SIDE LT_PNG_MAX_SIDE

/* an error message into err (LT_PNG_ERRLEN bytes), and -1 */
#define BAD(...) do { snprintf(err, LT_PNG_ERRLEN, __VA_ARGS__); return -1; } while (0)

static uint32_t get_u32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}
static void put_u32(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)(v >> 24); p[1] = (unsigned char)(v >> 16);
  p[2] = (unsigned char)(v >> 8);  p[3] = (unsigned char)v;
}

static int paeth(int a, int b, int c) {
  int p = a + b - c;
  int pa = p > a ? p - a : a - p, pb = p > b ? p - b : b - p, pc = p > c ? p - c : c - p;
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}

/* ---- encoding ------------------------------------------------------------ */

/* Filters one row with filter type f into out (without the type byte). */
static void filter_row(int f, const unsigned char *row, const unsigned char *prev,
                       size_t n, size_t bpp, unsigned char *out) {
  for (size_t i = 0; i < n; i++) {
    int a = i >= bpp ? row[i - bpp] : 0, b = prev ? prev[i] : 0, c = (prev && i >= bpp) ? prev[i - bpp] : 0;
    int pred = f == 0 ? 0 : f == 1 ? a : f == 2 ? b : f == 3 ? (a + b) / 2 : paeth(a, b, c);
    out[i] = (unsigned char)(row[i] - pred);
  }
}

/* One chunk at out: length, type, data (already in place when data ==
   out + 8, as the compressed image is), CRC.  Returns its size. */
static size_t put_chunk(unsigned char *out, const char *type, const unsigned char *data, size_t n) {
  put_u32(out, (uint32_t)n);
  memcpy(out + 4, type, 4);
  if (n && data != out + 8) memcpy(out + 8, data, n);
  uLong crc = crc32(0L, out + 4, 4);
  if (n) crc = crc32(crc, out + 8, (uInt)n);
  put_u32(out + 8 + n, (uint32_t)crc);
  return n + 12;
}

static size_t row_bytes(int64_t w, int c) { return (size_t)w * (size_t)c; }

size_t lt_png_encode_scratch(int64_t h, int64_t w, int c) {
  return (size_t)h * (row_bytes(w, c) + 1) + row_bytes(w, c);
}
size_t lt_png_encode_cap(int64_t h, int64_t w, int c) {
  /* signature, IHDR, IDAT (the zlib bound), IEND */
  return 8 + 25 + 12 + (size_t)compressBound((uLong)((size_t)h * (row_bytes(w, c) + 1))) + 12;
}

/* Per row, the filter with the smallest sum of absolute signed bytes (the
   heuristic libpng and most encoders use), into raw (with the type bytes). */
static void filter_image(const unsigned char *px, int64_t h, size_t stride, size_t bpp, unsigned char *raw,
                         unsigned char *trial) {
  for (int64_t y = 0; y < h; y++) {
    const unsigned char *row = px + (size_t)y * stride, *prev = y ? row - stride : NULL;
    unsigned char *dst = raw + (size_t)y * (stride + 1);
    uint64_t best = UINT64_MAX;
    for (int f = 0; f < 5; f++) {
      filter_row(f, row, prev, stride, bpp, trial);
      uint64_t sum = 0;
      for (size_t i = 0; i < stride; i++) sum += trial[i] < 128 ? trial[i] : 256 - trial[i];
      if (sum < best) { best = sum; dst[0] = (unsigned char)f; memcpy(dst + 1, trial, stride); }
    }
  }
}

size_t lt_png_encode(const unsigned char *px, int64_t h, int64_t w, int c, unsigned char *scratch,
                     unsigned char *out, size_t cap) {
  size_t stride = row_bytes(w, c), rawlen = (size_t)h * (stride + 1);
  unsigned char *raw = scratch, *trial = scratch + rawlen;
  filter_image(px, h, stride, (size_t)c, raw, trial);
  /* compressed straight into the IDAT chunk's data */
  unsigned char *idat = out + 8 + 25;
  uLongf zlen = (uLongf)(cap - 8 - 25 - 12 - 12);
  if (compress2(idat + 8, &zlen, raw, (uLong)rawlen, 6) != Z_OK) return 0;
  static const unsigned char colour_type[5] = { 0, 0, 4, 2, 6 };
  unsigned char ihdr[13];
  put_u32(ihdr, (uint32_t)w);
  put_u32(ihdr + 4, (uint32_t)h);
  ihdr[8] = 8; ihdr[9] = colour_type[c]; ihdr[10] = 0; ihdr[11] = 0; ihdr[12] = 0;
  memcpy(out, PNG_SIG, 8);
  size_t n = 8;
  n += put_chunk(out + n, "IHDR", ihdr, 13);
  n += put_chunk(out + n, "IDAT", idat + 8, zlen);
  n += put_chunk(out + n, "IEND", NULL, 0);
  return n;
}

/* ---- decoding ------------------------------------------------------------ */

static int samples_of(int colour) {
  switch (colour) { case 0: return 1; case 2: return 3; case 3: return 1; case 4: return 2; case 6: return 4; }
  return 0;
}

static int valid_depth(int colour, int depth) {
  switch (colour) {
  case 0: return depth == 1 || depth == 2 || depth == 4 || depth == 8 || depth == 16;
  case 3: return depth == 1 || depth == 2 || depth == 4 || depth == 8;
  case 2: case 4: case 6: return depth == 8 || depth == 16;
  }
  return 0;
}

/* Bytes of one filtered scanline (with its filter byte) of a pass w wide. */
static size_t line_bytes(const lt_png_info *p, uint32_t w) {
  return ((size_t)w * (size_t)p->samples * (size_t)p->depth + 7) / 8 + 1;
}

static const int A7_X0[7] = { 0, 4, 0, 2, 0, 1, 0 }, A7_Y0[7] = { 0, 0, 4, 0, 2, 0, 1 };
static const int A7_DX[7] = { 8, 8, 4, 4, 2, 2, 1 }, A7_DY[7] = { 8, 8, 8, 4, 4, 2, 2 };

static uint32_t pass_extent(uint32_t size, int start, int step) {
  return size > (uint32_t)start ? (size - (uint32_t)start + (uint32_t)step - 1) / (uint32_t)step : 0;
}

/* Reads sample s of pixel x from an unfiltered line (depth-aware). */
static unsigned sample_at(const unsigned char *line, const lt_png_info *p, uint32_t x, int s) {
  size_t idx = (size_t)x * (size_t)p->samples + (size_t)s;
  switch (p->depth) {
  case 16: return (unsigned)line[2 * idx] << 8 | line[2 * idx + 1];
  case 8: return line[idx];
  default: {
    size_t bit = idx * (size_t)p->depth;
    unsigned byte = line[bit / 8];
    int shift = 8 - p->depth - (int)(bit % 8);
    return (byte >> shift) & ((1u << p->depth) - 1);
  }
  }
}

static unsigned to8(unsigned v, int depth) {
  if (depth == 8) return v;
  if (depth == 16) return (v * 255u + 32895u) >> 16;   /* libpng's rounding */
  return v * 255u / ((1u << depth) - 1u);
}

/* Unfilters one line in place; prev is the unfiltered previous line of the
   same pass or NULL.  Returns 0 for an unknown filter type. */
static int unfilter(unsigned char *line, const unsigned char *prev, size_t n, size_t bpp) {
  int f = line[0];
  unsigned char *x = line + 1;
  const unsigned char *up = prev ? prev + 1 : NULL;
  for (size_t i = 0; i < n; i++) {
    int a = i >= bpp ? x[i - bpp] : 0, b = up ? up[i] : 0, c = (up && i >= bpp) ? up[i - bpp] : 0;
    int pred;
    switch (f) {
    case 0: pred = 0; break;
    case 1: pred = a; break;
    case 2: pred = b; break;
    case 3: pred = (a + b) / 2; break;
    case 4: pred = paeth(a, b, c); break;
    default: return 0;
    }
    x[i] = (unsigned char)(x[i] + pred);
  }
  return 1;
}

/* Inflates src into dst, which must come out exactly dstlen bytes.
   Returns NULL or an error message; never raises, so the stream is always
   ended.  Once dst is full, output goes to a one-byte sink: a stream that
   still produces data there is longer than the image. */
static const char *inflate_all(const unsigned char *src, size_t srclen, unsigned char *dst, size_t dstlen) {
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  if (inflateInit(&zs) != Z_OK) return "zlib could not start";
  const char *err = NULL;
  size_t in_done = 0, out_done = 0;
  const size_t cap = (size_t)1 << 30;   /* avail_in/out are uInt */
  unsigned char sink;
  for (;;) {
    size_t in_chunk = srclen - in_done < cap ? srclen - in_done : cap;
    size_t out_chunk = dstlen - out_done < cap ? dstlen - out_done : cap;
    int full = out_chunk == 0;
    zs.next_in = (Bytef *)(src + in_done); zs.avail_in = (uInt)in_chunk;
    zs.next_out = full ? &sink : dst + out_done; zs.avail_out = full ? 1u : (uInt)out_chunk;
    uInt out_before = zs.avail_out;
    int rc = inflate(&zs, Z_NO_FLUSH);
    in_done += in_chunk - zs.avail_in;
    size_t produced = out_before - zs.avail_out;
    if (full && produced) { err = "the compressed image data is longer than the image"; break; }
    out_done += produced;
    if (rc == Z_STREAM_END) {
      if (out_done != dstlen) err = "the compressed image data is shorter than the image";
      break;
    }
    if (rc == Z_BUF_ERROR) { err = "the compressed image data ends early"; break; }
    if (rc != Z_OK) { err = rc == Z_DATA_ERROR ? "the compressed image data is corrupt" : "zlib failed"; break; }
  }
  inflateEnd(&zs);
  return err;
}

/* One chunk of pass 1 (its length and CRC already checked): the header,
   palette, transparency; IDAT sizes; unknown critical chunks refused. */
static int read_chunk(lt_png_info *pp, const unsigned char *type, const unsigned char *data, uint32_t n,
                      int *seen_ihdr, int *seen_iend, char *err) {
  lt_png_info p = *pp;
  if (!*seen_ihdr && memcmp(type, "IHDR", 4) != 0) BAD("the first chunk is not IHDR");
  if (memcmp(type, "IHDR", 4) == 0) {
    if (*seen_ihdr || n != 13) BAD("bad IHDR chunk");
    *seen_ihdr = 1;
    p.width = get_u32(data); p.height = get_u32(data + 4);
    p.depth = data[8]; p.colour = data[9]; p.interlace = data[12];
    if (p.width == 0 || p.height == 0) BAD("image with zero width or height");
    if (p.width > MAX_SIDE || p.height > MAX_SIDE) BAD("image of %d x %d is larger than supported (%d per side)",
                                                      (int)p.width, (int)p.height, (int)MAX_SIDE);
    if (!valid_depth(p.colour, p.depth)) BAD("invalid colour type %d with bit depth %d", p.colour, p.depth);
    if (data[10] != 0 || data[11] != 0 || p.interlace > 1) BAD("unknown compression, filter or interlace method");
    p.samples = samples_of(p.colour);
  } else if (memcmp(type, "PLTE", 4) == 0) {
    if (n % 3 != 0 || n / 3 > 256 || n == 0) BAD("bad PLTE chunk");
    p.palette_len = (int)(n / 3);
    for (int i = 0; i < p.palette_len; i++) {
      p.palette[i][0] = data[3 * i]; p.palette[i][1] = data[3 * i + 1]; p.palette[i][2] = data[3 * i + 2];
      p.palette[i][3] = 255;
    }
  } else if (memcmp(type, "tRNS", 4) == 0) {
    if (p.colour == 3) {
      if (n > (uint32_t)p.palette_len) BAD("bad tRNS chunk");
      for (uint32_t i = 0; i < n; i++) p.palette[i][3] = data[i];
      p.has_trns = 1;
    } else if (p.colour == 0 && n == 2) {
      p.trns_grey = (uint16_t)(data[0] << 8 | data[1]); p.has_trns = 1;
    } else if (p.colour == 2 && n == 6) {
      for (int i = 0; i < 3; i++) p.trns_rgb[i] = (uint16_t)(data[2 * i] << 8 | data[2 * i + 1]);
      p.has_trns = 1;
    } else BAD("bad tRNS chunk");
  } else if (memcmp(type, "IDAT", 4) == 0) {
    p.idat_total += n;
  } else if (memcmp(type, "IEND", 4) == 0) {
    *seen_iend = 1;
  } else if (!(type[0] & 0x20)) {
    BAD("unknown critical chunk '%c%c%c%c'", type[0], type[1], type[2], type[3]);
  }
  *pp = p;
  return 0;
}

int lt_png_read_header(const unsigned char *s, size_t len, lt_png_info *pp, char *err) {
  lt_png_info p;
  memset(&p, 0, sizeof p);
  if (len < 8 || memcmp(s, PNG_SIG, 8) != 0) BAD("not a PNG file (bad signature)");
  int seen_ihdr = 0, seen_iend = 0;
  /* pass 1: check every chunk, read the header and palette, size the data */
  for (size_t pos = 8; !seen_iend;) {
    if (len - pos < 12) BAD("truncated file (chunk header at byte %d)", (int)pos);
    uint32_t n = get_u32(s + pos);
    if (n > 0x7fffffffu || (size_t)n > len - pos - 12) BAD("truncated file (a chunk of %d bytes at byte %d)", (int)n, (int)pos);
    const unsigned char *type = s + pos + 4, *data = s + pos + 8;
    uLong crc = crc32(crc32(0L, type, 4), data, n);
    if ((uint32_t)crc != get_u32(data + n)) BAD("CRC mismatch in chunk '%c%c%c%c'", type[0], type[1], type[2], type[3]);
    if (read_chunk(&p, type, data, n, &seen_ihdr, &seen_iend, err)) return -1;
    pos += (size_t)n + 12;
  }
  if (p.colour == 3 && p.palette_len == 0) BAD("palette image without a PLTE chunk");
  if (p.idat_total == 0) BAD("no image data (IDAT)");
  /* the raw (filtered) size: one or seven passes */
  int passes = p.interlace ? 7 : 1;
  for (int k = 0; k < passes; k++) {
    uint32_t pw = p.interlace ? pass_extent(p.width, A7_X0[k], A7_DX[k]) : p.width;
    uint32_t ph = p.interlace ? pass_extent(p.height, A7_Y0[k], A7_DY[k]) : p.height;
    if (pw && ph) p.rawlen += (size_t)ph * line_bytes(&p, pw);
  }
  /* output channels: grey 1, grey+alpha 2, RGB 3, RGBA 4; palette -> RGB(A);
     a tRNS colour key on grey/RGB adds an alpha channel */
  p.out_c = p.colour == 3 ? (p.has_trns ? 4 : 3) : p.samples + ((p.colour == 0 || p.colour == 2) && p.has_trns);
  *pp = p;
  return 0;
}

/* Unfilters the inflated passes in raw and writes the C x H x W planes. */
static int emit_pixels(const lt_png_info *pp, unsigned char *raw, unsigned char *out, char *err) {
  const lt_png_info p = *pp;
  int passes = p.interlace ? 7 : 1, out_c = p.out_c;
  size_t plane = (size_t)p.height * p.width;
  size_t bpp = ((size_t)p.samples * (size_t)p.depth + 7) / 8;
  unsigned char *line = raw;
  for (int k = 0; k < passes; k++) {
    uint32_t x0 = p.interlace ? (uint32_t)A7_X0[k] : 0, y0 = p.interlace ? (uint32_t)A7_Y0[k] : 0;
    uint32_t dx = p.interlace ? (uint32_t)A7_DX[k] : 1, dy = p.interlace ? (uint32_t)A7_DY[k] : 1;
    uint32_t pw = p.interlace ? pass_extent(p.width, (int)x0, (int)dx) : p.width;
    uint32_t ph = p.interlace ? pass_extent(p.height, (int)y0, (int)dy) : p.height;
    if (!pw || !ph) continue;
    size_t lb = line_bytes(&p, pw);
    unsigned char *prev = NULL;
    for (uint32_t r = 0; r < ph; r++, prev = line, line += lb) {
      if (!unfilter(line, prev, lb - 1, bpp)) BAD("unknown filter type %d in row %d", line[0], (int)r + 1);
      const unsigned char *px = line + 1;
      size_t y = (size_t)y0 + (size_t)r * dy;
      for (uint32_t c = 0; c < pw; c++) {
        size_t o = y * p.width + x0 + (size_t)c * dx;
        if (p.colour == 3) {
          unsigned idx = sample_at(px, &p, c, 0);
          if ((int)idx >= p.palette_len) BAD("palette index %d out of range (palette of %d)", (int)idx, p.palette_len);
          for (int ch = 0; ch < out_c; ch++) out[(size_t)ch * plane + o] = p.palette[idx][ch];
          continue;
        }
        int key = p.has_trns;
        for (int ch = 0; ch < p.samples; ch++) {
          unsigned v = sample_at(px, &p, c, ch);
          if (key && v != (p.colour == 0 ? p.trns_grey : p.trns_rgb[ch])) key = 0;
          out[(size_t)ch * plane + o] = (unsigned char)to8(v, p.depth);
        }
        if (out_c > p.samples) out[(size_t)p.samples * plane + o] = key ? 0 : 255;
      }
    }
  }
  return 0;
}

int lt_png_decode(const unsigned char *s, const lt_png_info *pp, unsigned char *z, unsigned char *raw,
                  unsigned char *out, char *err) {
  /* pass 2: gather IDAT data contiguously */
  size_t zpos = 0;
  for (size_t pos = 8;;) {
    uint32_t n = get_u32(s + pos);
    if (memcmp(s + pos + 4, "IDAT", 4) == 0) { memcpy(z + zpos, s + pos + 8, n); zpos += n; }
    if (memcmp(s + pos + 4, "IEND", 4) == 0) break;
    pos += (size_t)n + 12;
  }
  const char *zerr = inflate_all(z, pp->idat_total, raw, pp->rawlen);
  if (zerr) BAD("%s", zerr);
  return emit_pixels(pp, raw, out, err);
}
