;; check: after a reply that changed files, run the project's check command
;; before the task may end, and give the model the failures until the
;; check passes or the rounds run out.
;;
;;   nib exec --strategy check --approve writes "make the tests pass"
;;
;; Settings (--set key=value, or [set] in the config):
;;   check         the command (default: detected from the workspace:
;;                 cargo test, go test ./..., npm test, python -m pytest -q,
;;                 make test)
;;   check_rounds  how many failed checks the model is told of (default 3)
;;   check_timeout seconds the command may run (default 600)
;;
;; The command runs as the strategy's own `shell` call: through the guard,
;; logged as the strategy's, and refused like any command in a run that
;; does not approve writes.

(define check-dirty (box #f))
(define check-failures (box 0))

(define (check-command)
  (let ([set (setting "check" "")])
    (if (equal? set "") (detected-check-command) set)))

;; A file changed: the next finish is checked.
(on "after-tool"
    (lambda (call result)
      (if (and (equal? (assoc-ref call "kind" "") "write") (tool-ok? result))
          (set-box! check-dirty #t)
          #f)
      result))

(define (check-output r)
  (let ([tail (assoc-ref r "output_tail" "")])
    (if (equal? tail "") (tool-text r) tail)))

(on "before-finish"
    (lambda (text)
      (let ([cmd (check-command)])
        (cond
          [(not (unbox check-dirty)) #f]
          [(not cmd) (say "check: no check command found; set one with --set check=CMD") #f]
          [else
           (set-box! check-dirty #f)
           (let* ([r (shell cmd (string->number (setting "check_timeout" "600")))]
                  [code (assoc-ref r "exit_code" #f)])
             (cond
               [(tool-refused? r)
                (say (string-append "check: `" cmd "` was not run: " (tool-text r)))
                #f]
               [(equal? code 0) (say (string-append "check: `" cmd "` passed")) #f]
               [(>= (unbox check-failures) (string->number (setting "check_rounds" "3")))
                (say (string-append "check: `" cmd "` still fails; giving up after "
                                    (setting "check_rounds" "3") " rounds"))
                #f]
               [else
                (set-box! check-failures (+ 1 (unbox check-failures)))
                (string-append "The project's check `" cmd "` failed after your changes:\n\n"
                               (check-output r)
                               "\n\nFix what it reports, then answer again.")]))]))))
