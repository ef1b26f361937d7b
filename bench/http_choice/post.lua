wrk.method = "POST"
wrk.path = "/x"
wrk.headers["Content-Type"] = "application/json"
wrk.body = [[{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"705ab4f5-6393-11e8-b7cc-42010a800002","operation":"CREATE","kind":{"group":"","version":"v1","kind":"ConfigMap"},"object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"default"},"data":{"k":""}}}}]]
