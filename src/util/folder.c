/* folder.c — what a folder holds (see folder.h). */
#include "util/folder.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>

gl_status gl_folder_list(const char *dir, gl_names *names)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return gl_fail(GL_ERR_IO, "%s: cannot open folder: %s", dir, strerror(errno));
    for (struct dirent *e; (e = readdir(dp));)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            gl_names_add(names, e->d_name);
    closedir(dp);
    gl_names_sort(names);
    return GL_OK;
}
