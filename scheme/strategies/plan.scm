;; plan: look first, change second. The model works read-only until its
;; plan is approved: it reads what it needs and answers with a plan, which
;; is shown to the user and put to them with `ask`; on yes it carries the
;; plan out, on no the plan is the answer.
;;
;;   nib --strategy plan            (the terminal client asks you)
;;   nib exec --strategy plan ...   (unattended: ask answers by policy, see
;;                                   docs/strategies.md; no means the run ends with the plan)

(define plan-approved (box #f))
(define plan-told (box #f))

(define plan-note
  "Work in two phases. First read what you need (read-only tools only) and answer with a short, numbered plan of the changes you will make. Do not change any file until the plan is approved.")

;; The first request carries the instructions for the read-only phase.
(on "before-model"
    (lambda (messages tools)
      (if (unbox plan-told)
          messages
          (begin
            (set-box! plan-told #t)
            (append messages (list (json-object "role" "user" "content" plan-note)))))))

(on "before-tool"
    (lambda (call)
      (if (or (unbox plan-approved) (equal? (assoc-ref call "kind" "") "read-only"))
          call
          (refuse "the plan is not approved yet: only read-only tools until then; answer with your plan"))))

(on "before-finish"
    (lambda (text)
      (if (unbox plan-approved)
          #f
          (begin
            (say (string-append "plan:\n" text))
            (if (ask "Carry out this plan?")
                (begin
                  (set-box! plan-approved #t)
                  "The plan is approved. Carry it out now, then say what you changed.")
                #f)))))
