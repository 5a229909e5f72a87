/* folder.h — what a folder holds. */
#ifndef GL_FOLDER_H
#define GL_FOLDER_H

#include "util/status.h"
#include "util/manifest.h"

/* The names of the entries in folder `dir` ("." and ".." left out), added to *names and
 * sorted (gl_names_sort). GL_ERR_IO naming dir when it cannot be opened. */
gl_status gl_folder_list(const char *dir, gl_names *names);

#endif
