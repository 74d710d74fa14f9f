-- Each patient's date of birth: what a clinic asks, with the CPF, before it talks about or acts for another patient
-- (identity verification; the privacy red team's canaries). A table of its own, so a store made by an earlier
-- version gains it on the next start instead of lacking a column. Keep in step with the .postgres.sql twin.

CREATE TABLE IF NOT EXISTS patient_details (
    id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    fixture_ref TEXT,
    clinic_id TEXT NOT NULL REFERENCES clinics(id),
    patient_id TEXT NOT NULL REFERENCES patients(id),
    birth_date TEXT NOT NULL        -- ISO 8601 date
);

CREATE INDEX IF NOT EXISTS idx_patient_details_run ON patient_details(run_id);
CREATE INDEX IF NOT EXISTS idx_patient_details_patient ON patient_details(patient_id);
