/*
 * lt_png.h -- the PNG codec over zlib (lt_png.c); Lua-free.  The caller
 * allocates every buffer (the binding, as userdata, so that an error leaks
 * nothing) and turns an error message into its error.
 *
 * Encode: an H x W x C (C = 1..4: grey, grey+alpha, RGB, RGBA) 8-bit image,
 * 1 <= H, W <= LT_PNG_MAX_SIDE, into a PNG file of at most
 * lt_png_encode_cap bytes, with lt_png_encode_scratch bytes of scratch.
 * Decode: lt_png_read_header checks every chunk and sizes the buffers (z:
 * idat_total bytes, raw: rawlen, out: out_c x height x width), then
 * lt_png_decode fills out (uint8 planes, C x H x W).
 */
#ifndef LT_PNG_H
#define LT_PNG_H

#include <stddef.h>
#include <stdint.h>

/* Largest image accepted: keeps every size computation far from overflow
   (2^31 pixels per side would already be 8 GB per channel). */
#define LT_PNG_MAX_SIDE 65535u
/* the size of an error message buffer */
#define LT_PNG_ERRLEN 160

size_t lt_png_encode_scratch(int64_t h, int64_t w, int c);
size_t lt_png_encode_cap(int64_t h, int64_t w, int c);
/* Returns the file's length in out, or 0 when zlib could not compress. */
size_t lt_png_encode(const unsigned char *px, int64_t h, int64_t w, int c, unsigned char *scratch,
                     unsigned char *out, size_t cap);

typedef struct lt_png_info {
  uint32_t width, height;
  int depth, colour, interlace;
  int samples;                    /* samples per pixel in the file */
  unsigned char palette[256][4];  /* RGBA */
  int palette_len, has_trns;
  uint16_t trns_grey, trns_rgb[3];
  size_t idat_total, rawlen;      /* compressed and inflated bytes */
  int out_c;                      /* channels of the decoded image */
} lt_png_info;
/* 0, or -1 with a message in err (LT_PNG_ERRLEN bytes) */
int lt_png_read_header(const unsigned char *s, size_t len, lt_png_info *p, char *err);
int lt_png_decode(const unsigned char *s, const lt_png_info *p, unsigned char *z, unsigned char *raw,
                  unsigned char *out, char *err);

#endif
