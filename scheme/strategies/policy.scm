;; policy: rules on calls before they run, written as before-tool hooks.
;; An example to copy; each rule is a few lines.
;;
;;   nib exec --hook policy "clean up the build scripts"
;;
;; - refuse `rm -r`/`rm -rf` of anything but a temporary directory;
;; - refuse absolute paths and `..` in the file tools (the guard denies
;;   paths outside the workspace anyway; this says it earlier, kindly);
;; - rewrite `./src/a.py` to `src/a.py`, so paths match what fs-read showed.

(define (words s) (split-whitespace s))

(define (temporary? path)
  (or (starts-with? path "/tmp/") (starts-with? path "$TMPDIR") (starts-with? path "${TMPDIR")))

;; The operands of every `rm` whose options include -r, in a command line.
(define (recursive-rm-targets command)
  (let loop ([ws (words command)] [in-rm #f] [recursive #f] [out '()])
    (cond
      [(null? ws) (if recursive out '())]
      [(equal? (car ws) "rm") (loop (cdr ws) #t #f out)]
      [(member (car ws) (list "&&" "||" ";" "|")) (loop (cdr ws) #f recursive out)]
      [(and in-rm (starts-with? (car ws) "-"))
       (loop (cdr ws) #t (or recursive (string-contains? (car ws) "r") (string-contains? (car ws) "R")) out)]
      [in-rm (loop (cdr ws) #t recursive (cons (car ws) out))]
      [else (loop (cdr ws) #f recursive out)])))

(define (no-rm-rf call)
  (if (equal? (assoc-ref call "name" "") "shell")
      (let ([bad (filter (lambda (t) (not (temporary? t)))
                         (recursive-rm-targets (assoc-ref (assoc-ref call "args" '()) "command" "")))])
        (if (null? bad)
            call
            (refuse (string-append "policy: recursive rm of " (string-join bad " ")
                                   " (only temporary directories may be removed recursively; delete files one by one, or ask the user)"))))
      call))

(define (clean-paths call)
  (let* ([args (assoc-ref call "args" '())]
         [path (if (list? args) (assoc-ref args "path" #f) #f)])
    (cond
      [(not (string? path)) call]
      [(or (starts-with? path "/") (string-contains? path "..")) 
       (refuse (string-append "policy: give paths relative to the workspace root, without .. (got " path ")"))]
      [(starts-with? path "./")
       (assoc-set call "args" (assoc-set args "path" (substring path 2 (string-length path))))]
      [else call])))

(on "before-tool" no-rm-rf)
(on "before-tool" clean-paths)
