/* test_saves.c — saves put into a folder as a whole (onnx/save_set.h) and the names by
 * which the temporaries of killed processes are told apart (util/stale_temps.h).
 * tests/saves.sh kills real saves at exact points; here the rules themselves, as tables. */
#include "onnx/save_set.h"
#include "onnx/onnx_io.h"
#include "util/stale_temps.h"
#include "testutil.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

Test(saves, temporary_folder_names)
{
    static const struct {
        const char *name;
        pid_t pid;
    } cases[] = {
        {".graphlab-save.123.tmp.AbC123", 123},
        {".graphlab-save.2147483647.tmp.zzzzzz", 2147483647},
        {".graphlab-save.2147483648.tmp.zzzzzz", 0}, /* no pid that large */
        {".graphlab-save.0.tmp.AbC123", 0},
        {".graphlab-save.0123.tmp.AbC123", 0},       /* a leading zero */
        {".graphlab-save.12a.tmp.AbC123", 0},
        {".graphlab-save..tmp.AbC123", 0},
        {".graphlab-save.123.tmp.AbC12", 0},         /* five random characters */
        {".graphlab-save.123.tmp.AbC1234", 0},       /* seven */
        {".graphlab-save.123.tmp.AbC_23", 0},        /* not one of [A-Za-z0-9] */
        {".graphlab-save.123.tmp.", 0},
        {"graphlab-save.123.tmp.AbC123", 0},         /* not hidden */
        {".graphlab-saves.123.tmp.AbC123", 0},       /* another stem */
        {".graphlab-save.123.temp.AbC123", 0},
        {".graphlab-save.123.tmp.AbC123/x", 0},
        {"", 0},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++)
        cr_expect_eq(gl_temp_name_pid(cases[i].name, ".graphlab-save.", ".tmp."), cases[i].pid,
                     "'%s'", cases[i].name);
}

/* gl_atomic_open's temporary files, "<path>.tmp.<pid>.XXXXXX": a dead process's are
 * removed by the next writer of the same path, nothing else is. */
Test(saves, stale_temporary_files_of_a_path)
{
    char *dir = tu_tmpdir();
    pid_t dead = fork();
    if (dead == 0)
        _exit(0);
    waitpid(dead, NULL, 0);
    static const struct {
        const char *fmt; /* %ld: a pid */
        bool dead_pid;   /* the pid is the dead child's, else ours */
        bool folder;
        bool removed;
    } cases[] = {
        {"t.json.tmp.%ld.AbC123", true, false, true},
        {"t.json.tmp.%ld.AbC123", false, false, false}, /* a live writer's */
        {"t.json.tmp.%ld.XyZ789", true, true, false},   /* a folder */
        {"t.json.tmp.%ld.AbC12", true, false, false},
        {"t.json.tmp.%ld.AbC1234", true, false, false},
        {"t.json.tmp.0%ld.AbC123", true, false, false},
        {"t.json.tmp.%ldAbC123", true, false, false},
        {"u.json.tmp.%ld.AbC123", true, false, false},  /* another file's */
        {"xt.json.tmp.%ld.AbC123", true, false, false},
    };
    char names[GL_ARRAY_LEN(cases)][128];
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        snprintf(names[i], sizeof(names[i]), cases[i].fmt,
                 (long)(cases[i].dead_pid ? dead : getpid()));
        char path[2048];
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        if (cases[i].folder)
            cr_assert_eq(mkdir(path, 0700), 0, "%s", path);
        else
            cr_assert(tu_write_file(path, "x", 1), "%s", path);
    }
    char target[2048];
    snprintf(target, sizeof(target), "%s/t.json", dir);
    gl_stale_file_temps_remove(target);
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        char path[2048];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        cr_expect_eq(lstat(path, &st) != 0, cases[i].removed, "%s", names[i]);
    }
    tu_rmtree(dir);
    free(dir);
}

Test(saves, tensor_file_names)
{
    static const struct {
        const char *name;
        bool ours;
    } cases[] = {
        {"0001_x.AbC123.pb", true},
        {"0001_x.pb", true},          /* an index of before save ids */
        {"12345_a-b.c_d.pb", true},
        {"0001_.pb", true},           /* the empty key */
        {"001_x.pb", false},          /* three digits */
        {"0001x.pb", false},
        {"0001_x.onnx", false},
        {"0001_x/y.pb", false},
        {"0001_../x.pb", false},
        {"0001_x y.pb", false},
        {"index.json", false},
        {"model.onnx", false},
        {"../up.pb", false},
        {"0001_", false},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++)
        cr_expect_eq(gl_save_tensor_file_name(cases[i].name), cases[i].ours, "'%s'",
                     cases[i].name);
}

Test(saves, processes_gone_or_not)
{
    cr_expect(!gl_process_gone(getpid()), "this process");
    cr_expect(!gl_process_gone(1), "init: exists (EPERM or not)");
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    cr_assert_gt(child, 0);
    waitpid(child, NULL, 0);
    cr_expect(gl_process_gone(child), "a child that ended and was reaped");
}

/* A file at DIR/NAME with `text` in it. */
static void put(const char *dir, const char *name, const char *text)
{
    char path[2048];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    cr_assert(tu_write_file(path, text, strlen(text)), "%s", path);
}

static bool there(const char *dir, const char *name)
{
    char path[2048];
    struct stat st;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return lstat(path, &st) == 0;
}

static const char index_a[] = "{\"tensors\": [{\"name\": \"x\", \"file\": \"0001_x.aaaaaa.pb\"}]}\n";
static const char index_b[] = "{\"tensors\": [{\"name\": \"x\", \"file\": \"0001_x.bbbbbb.pb\"}]}\n";

/* What the next save does with the temporary folder a killed save left, at each point
 * it could be killed: the files of the set DIR/index.json does not name go (the new
 * set's before the commit, the old set's after), the files it names stay, and so does
 * every file no index names. */
Test(saves, a_killed_save_is_undone_by_the_next)
{
    static const struct {
        const char *what;
        const char *dir_index;   /* DIR/index.json */
        bool tmp_index;          /* the killed save's new index still in its folder */
        bool tmp_previous;       /* ... and its copy of the old one */
        bool a_stays, b_stays;   /* 0001_x.aaaaaa.pb (old set), 0001_x.bbbbbb.pb (new) */
    } cases[] = {
        {"killed while writing", index_a, false, false, true, true /* never moved */},
        {"killed while moving", index_a, true, true, true, false},
        {"killed after the commit", index_b, false, true, false, true},
        {"killed before its first save's commit", NULL, true, false, true, false},
    };
    for (size_t i = 0; i < GL_ARRAY_LEN(cases); i++) {
        char *dir = tu_tmpdir();
        pid_t dead = fork();
        if (dead == 0)
            _exit(0);
        waitpid(dead, NULL, 0);
        char tmp[2048], stale[64];
        snprintf(stale, sizeof(stale), ".graphlab-save.%ld.tmp.bbbbbb", (long)dead);
        snprintf(tmp, sizeof(tmp), "%s/%s", dir, stale);
        cr_assert_eq(mkdir(tmp, 0700), 0);
        if (cases[i].dir_index)
            put(dir, GL_SAVE_INDEX, cases[i].dir_index);
        if (cases[i].tmp_index)
            put(tmp, GL_SAVE_INDEX, index_b);
        if (cases[i].tmp_previous)
            put(tmp, "previous-index.json", index_a);
        put(dir, "0001_x.aaaaaa.pb", "a");
        put(dir, "0001_x.bbbbbb.pb", "b");
        put(dir, "0002_mine.cccccc.pb", "named by no index");
        gl_save_set s;
        cr_assert_eq(gl_save_set_open(&s, GL_SAVE_TENSORS, dir), GL_OK, "%s",
                     gl_error_message());
        gl_save_set_abort(&s);
        cr_expect(!there(dir, stale), "%s: the temporary folder is removed", cases[i].what);
        cr_expect_eq(there(dir, "0001_x.aaaaaa.pb"), cases[i].a_stays, "%s: the old set's file",
                     cases[i].what);
        cr_expect_eq(there(dir, "0001_x.bbbbbb.pb"), cases[i].b_stays, "%s: the new set's file",
                     cases[i].what);
        cr_expect(there(dir, "0002_mine.cccccc.pb"), "%s: a file no index names stays",
                  cases[i].what);
        tu_rmtree(dir);
        free(dir);
    }
}

static gl_tensor *scalar(float v)
{
    return tu_tensor_f32(1, (const int64_t[]){1}, (const float[]){v});
}

/* A refusal at the commit (a destination that is a link) moves nothing: the last save
 * stays whole, and no temporary is left. */
Test(saves, a_refused_commit_changes_nothing)
{
    char *dir = tu_tmpdir();
    gl_tensor *one = scalar(1), *two = scalar(2);
    gl_save_set s;
    cr_assert_eq(gl_save_set_open(&s, GL_SAVE_OUTPUTS, dir), GL_OK, "%s", gl_error_message());
    cr_assert_eq(gl_save_set_tensor(&s, "output_0.pb", one), GL_OK, "%s", gl_error_message());
    cr_assert_eq(gl_save_set_tensor(&s, "output_1.pb", one), GL_OK, "%s", gl_error_message());
    cr_assert_eq(gl_save_set_commit(&s), GL_OK, "%s", gl_error_message());
    char link[2048];
    snprintf(link, sizeof(link), "%s/output_1.pb", dir);
    cr_assert_eq(unlink(link), 0);
    cr_assert_eq(symlink("output_0.pb", link), 0);
    cr_assert_eq(gl_save_set_open(&s, GL_SAVE_OUTPUTS, dir), GL_OK, "%s", gl_error_message());
    cr_assert_eq(gl_save_set_tensor(&s, "output_0.pb", two), GL_OK, "%s", gl_error_message());
    cr_assert_eq(gl_save_set_tensor(&s, "output_1.pb", two), GL_OK, "%s", gl_error_message());
    cr_expect_eq(gl_save_set_commit(&s), GL_ERR_INPUT);
    cr_expect(strstr(gl_error_message(), "output_1.pb: is a symbolic link"), "%s",
              gl_error_message());
    char path[2048];
    snprintf(path, sizeof(path), "%s/output_0.pb", dir);
    gl_tensor *t = NULL;
    cr_assert_eq(gl_tensor_read_pb(path, &t), GL_OK, "%s", gl_error_message());
    cr_expect(gl_tensor_equal(t, one), "output_0.pb is the last save's");
    cr_expect_eq(tu_dir_entries(dir), 2, "output_0.pb and the link, nothing else");
    gl_tensor_free(t);
    gl_tensor_free(one);
    gl_tensor_free(two);
    tu_rmtree(dir);
    free(dir);
}
