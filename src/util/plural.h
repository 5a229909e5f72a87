/* plural.h — a count's noun in agreement with it, for every text a person reads:
 * "1 decision", "13 decisions", "1 match", "2 matches".
 *
 *     printf("%zu %s", n, gl_noun(n, "decision", "decisions"));
 *
 * Both forms are written out (not "s" appended) so irregular nouns read right too. */
#ifndef GL_PLURAL_H
#define GL_PLURAL_H

static inline const char *gl_noun(long long count, const char *one, const char *many)
{
    return count == 1 ? one : many;
}

#endif
