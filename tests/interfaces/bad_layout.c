/* bad_layout.c -- stands in for shapes_cnp_layout.c with a NAME_config one int64 larger than
** the Fortran module's (a module and a header from different cnpc runs): the Fortran
** shapes_setup must refuse with CNP_EABI and say why, before the C setup runs. */
#include "shapes.h"

#include <stddef.h>

size_t shapes_cnp_layout(size_t *offsets, size_t n, size_t sizes[2]);

size_t shapes_cnp_layout(size_t *offsets, size_t n, size_t sizes[2])
{
  for (size_t i = 0; i < n; i++) offsets[i] = 0;
  sizes[0] = sizeof(shapes_stats);
  sizes[1] = sizeof(cnp_array);
  return sizeof(shapes_config) + 8;
}
