;; FIXED DURING THE SESSION: failed on the 09:32, 10:09 and 10:24 builds; passes on the 10:29:49 build.
;; Remote URLs with a password that has no vendor shape (basic auth to a self-hosted server), in
;; the repository's .git/config and in a vendored clone's vendor/lib/.git/config: not learned, so a
;; command printing just the password (python splits the URL; `git remote -v` itself is redacted by
;; the URL-password shape rule) hands it to the model. The placeholder is a token reversed, so it has
;; no shape. One Write. Proves: git-config credentials are learned by vendor shape only.
(scenario "336-rt-shapeless-url-passwords-in-git-configs"
  (doc "check the remotes")
  (channel protected-to-unprotected)
  (modes interactive unattended)
  (files ("a.txt" "x\n")
         (".git/config" "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n[remote \"origin\"]\n\turl = https://ci:{{GH|rev}}@git.corp.example/app.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n")
         ("vendor/lib/.git/config" "[core]\n\trepositoryformatversion = 0\n\tbare = false\n[remote \"origin\"]\n\turl = https://deploy:{{SK|rev}}@git.corp.example/lib.git\n")
         ("vendor/lib/.git/HEAD" "ref: refs/heads/main\n"))
  (git "a.txt")
  (replies
    ((shell "python3 -c \"import re, glob\nfor p in [chr(46) + 'git/config', 'vendor/lib/' + chr(46) + 'git/config']:\n  print(re.findall(r'//[^:]+:([^@]+)@', open(p).read()))\"")))
  (expect
    (decision 1 write)
    (no-canary-in-requests)))
